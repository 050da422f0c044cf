// The informer's WatchList, against scripted answers (the real API server's are in
// test/e2e/router-informer-watch-list.test.ts): synced only at the initial-events-end bookmark, a stream broken
// or expired before it starts over cleanly, a refusal falls back to list + watch once per API server, the value
// budget and the transform apply to the streamed state, and the watch goes on from the bookmark's version.
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Informer, stripManagedFields } from './informer.ts';
import { KubeApiError, type KubeClient } from './kube-client.ts';

const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const line = (event: unknown) => `${JSON.stringify(event)}\n`;
const added = (name: string, rv: string, extra: object = {}) => line({ type: 'ADDED', object: { metadata: { name, namespace: 'a', uid: name, resourceVersion: rv, managedFields: [{ manager: 'm' }] }, ...extra } });
const end = (rv: string) => line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } } });
const EXPIRED = line({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } });

type Query = Record<string, unknown>;
/** An answer to a watch: a stream to write to, scripted lines (then the stream ends), or an error. */
type Answer = PassThrough | string[] | Error;

/** A client whose watch number n gets answers[n-1] (an open, silent stream after the last) and whose lists are empty. */
function server(answers: Answer[]) {
  const watches: Query[] = [];
  let lists = 0;
  const client = {
    serverKey: {},
    requestText: () => {
      lists += 1;
      return Promise.resolve(JSON.stringify({ metadata: { resourceVersion: `list${lists}` }, items: [] }));
    },
    streamResponse: (request: { query: Query; signal: AbortSignal }) => {
      const answer = answers[watches.length] ?? new PassThrough();
      watches.push(request.query);
      if (answer instanceof Error) return Promise.reject(answer);
      const body = Array.isArray(answer) ? Readable.from(answer) : answer;
      // As undici's body: aborting the request ends it.
      request.signal.addEventListener('abort', () => body.destroy(request.signal.reason as Error), { once: true });
      return Promise.resolve({ body, contentType: 'application/json;stream=watch' });
    },
  } as unknown as KubeClient;
  return { client, watches, lists: () => lists };
}

const informers: Informer[] = [];
afterEach(async () => {
  for (const i of informers.splice(0)) await i.stop();
});
function start(client: KubeClient, options: { maxValues?: number; onRefused?: () => void; watchTimeoutSeconds?: number; bookmarkedWatchTimeoutSeconds?: number; watchSilenceMs?: number } = {}): { informer: Informer; restarts: string[] } {
  const informer = new Informer({ client, resource, transform: stripManagedFields, backoff: { baseMs: 1, maxMs: 1, jitter: 0 }, ...options });
  const restarts: string[] = [];
  informer.on('restart', (reason) => restarts.push(reason));
  informers.push(informer.start());
  return { informer, restarts };
}
const keys = (i: Informer) => [...i.store.keys()].sort();
const isWatchList = (q: Query | undefined) => q?.sendInitialEvents === true && q.resourceVersionMatch === 'NotOlderThan' && q.resourceVersion === undefined;

describe('Informer with WatchList', () => {
  it('caches nothing and is not synced until the initial-events-end bookmark, then watches on from its version', async () => {
    const first = new PassThrough();
    const s = server([first]);
    const { informer } = start(s.client);
    const synced: string[][] = [];
    informer.on('synced', () => synced.push(keys(informer)));
    // Whether the end had been sent when each add was told.
    let ended = false;
    const adds: boolean[] = [];
    informer.on('add', () => adds.push(ended));
    first.write(added('one', '5') + added('two', '6'));
    // A progress bookmark is not the end.
    first.write(line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '6' } } }));
    await vi.waitFor(() => expect(s.watches).toHaveLength(1));
    expect(isWatchList(s.watches[0])).toBe(true);
    ended = true;
    first.write(end('7'));
    await informer.waitForSync();
    expect(adds).toEqual([true, true]);
    expect(synced).toEqual([['a/one', 'a/two']]);
    expect([informer.filledBy, informer.resourceVersion, s.lists()]).toEqual(['watch-list', '7', 0]);
    expect(informer.store.get('a/one')).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(informer.store.get('a/one')?.metadata?.managedFields).toBeUndefined();

    // The same stream is the watch: a change after the bookmark is an update.
    first.write(line({ type: 'MODIFIED', object: { metadata: { name: 'one', namespace: 'a', uid: 'one', resourceVersion: '8' } } }));
    await vi.waitFor(() => expect(informer.resourceVersion).toBe('8'));
    // Ended by the server (its timeout): resumed from the last version, no second WatchList.
    first.end();
    await vi.waitFor(() => expect(s.watches).toHaveLength(2));
    expect(s.watches[1]).toMatchObject({ watch: true, resourceVersion: '8' });
    expect(s.watches[1]?.sendInitialEvents).toBeUndefined();
    // The WatchList and the watch after it asked for the long timeout: no renewal 300-600 s after the start.
    expect(s.watches[0]?.timeoutSeconds).toBeGreaterThanOrEqual(1800);
    expect(s.watches[1]?.timeoutSeconds).toBeGreaterThanOrEqual(1800);
  });

  it('ends a watch that hears nothing for its silence limit once a bookmark was heard, and watches on from its version', async () => {
    const first = new PassThrough();
    // The second watch stays open and silent, as a dead connection would.
    const s = server([first]);
    const { informer, restarts } = start(s.client, { watchSilenceMs: 50 });
    first.write(added('one', '5') + end('6'));
    await informer.waitForSync();
    first.write(line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } }));
    await vi.waitFor(() => expect(restarts).toEqual(['silent']));
    await vi.waitFor(() => expect(s.watches.length).toBeGreaterThanOrEqual(2));
    expect(s.watches[1]).toMatchObject({ watch: true, resourceVersion: '7' });
    expect(keys(informer)).toEqual(['a/one']);
  });

  it('keeps the short timeout and counts no silence when the server sent no bookmark (a list, then a watch)', async () => {
    const refusal = new KubeApiError(422, 'Invalid', 'sendInitialEvents: Forbidden', { method: 'GET', path: '/api/v1/configmaps' });
    const silent = new PassThrough();
    const s = server([refusal, silent]);
    const { informer, restarts } = start(s.client, { watchSilenceMs: 50 });
    await informer.waitForSync();
    await vi.waitFor(() => expect(s.watches).toHaveLength(2));
    await new Promise((r) => setTimeout(r, 200));
    expect([s.watches.length, restarts]).toEqual([2, []]);
    expect(s.watches[1]?.timeoutSeconds).toBeLessThan(600);
  });

  it('starts over cleanly when the stream breaks or expires before the bookmark: only the new state is cached', async () => {
    const broken = new PassThrough();
    const s = server([broken, [added('stale', '3'), EXPIRED], [added('fresh', '9'), end('9')]]);
    const { informer, restarts } = start(s.client);
    broken.write(added('half', '2'));
    await vi.waitFor(() => expect(s.watches).toHaveLength(1));
    broken.destroy(new Error('other side closed'));
    await informer.waitForSync();
    expect(keys(informer)).toEqual(['a/fresh']);
    expect(restarts).toEqual(['error', 'gone']);
    expect(s.watches.slice(0, 3).every(isWatchList)).toBe(true);
    expect(s.lists()).toBe(0);
  });

  it('falls back to list + watch when the server refuses a WatchList (422), and no informer on that server asks again', async () => {
    const refusal = new KubeApiError(422, 'Invalid', 'sendInitialEvents: Forbidden', { method: 'GET', path: '/api/v1/configmaps' });
    const s = server([refusal]);
    const { informer, restarts } = start(s.client);
    await informer.waitForSync();
    expect([informer.filledBy, informer.resourceVersion, s.lists(), restarts]).toEqual(['list', 'list1', 1, []]);
    await vi.waitFor(() => expect(s.watches).toHaveLength(2));
    expect(s.watches[1]).toMatchObject({ watch: true, resourceVersion: 'list1' });

    const second = start(s.client).informer;
    await second.waitForSync();
    expect([second.filledBy, s.lists()]).toEqual(['list', 2]);
    expect(s.watches.filter(isWatchList)).toHaveLength(1);
  });

  it('falls back to list + watch when the server ends the stream at its timeout without the bookmark (it ignored sendInitialEvents)', async () => {
    const s = server([[added('one', '5')]]);
    // A timeout of 0 s: any end is at the timeout.
    const { informer } = start(s.client, { bookmarkedWatchTimeoutSeconds: 0 });
    await informer.waitForSync();
    expect([informer.filledBy, s.lists()]).toEqual(['list', 1]);
  });

  it('falls back to list + watch when the stream goes on past its fill deadline without the bookmark (a plain watch to the server)', async () => {
    const plain = new PassThrough();
    const s = server([plain]);
    // 50-100 ms to the end, though the server was asked to keep the watch open 1,800 s or more.
    const { informer, restarts } = start(s.client, { watchTimeoutSeconds: 0.05 });
    plain.write(added('one', '5') + line({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '6' } } }));
    await informer.waitForSync();
    expect([informer.filledBy, s.lists(), restarts]).toEqual(['list', 1, []]);
    expect(s.watches[0]?.timeoutSeconds).toBeGreaterThanOrEqual(1800);
    expect(plain.destroyed).toBe(true);
    // The watch after the list: a plain one, from the list's version.
    await vi.waitFor(() => expect(s.watches).toHaveLength(2));
    expect(s.watches[1]).toMatchObject({ watch: true, resourceVersion: 'list1' });
  });

  it('keeps a filled WatchList open past its fill deadline: the deadline is for the bookmark alone', async () => {
    const first = new PassThrough();
    const s = server([first]);
    // A deadline of 0.5-1 s: long enough that a loaded machine reads the end first, short enough to wait out.
    const { informer, restarts } = start(s.client, { watchTimeoutSeconds: 0.5 });
    first.write(added('one', '5') + end('6'));
    await informer.waitForSync();
    await new Promise((r) => setTimeout(r, 1200));
    expect([s.watches.length, restarts, first.destroyed]).toEqual([1, [], false]);
  });

  it('asks for a WatchList again when the server ends the stream early without the bookmark (shutting down, say)', async () => {
    const s = server([[added('one', '5')], [added('one', '5'), end('5')]]);
    const { informer, restarts } = start(s.client);
    await informer.waitForSync();
    expect([informer.filledBy, keys(informer), restarts, s.lists()]).toEqual(['watch-list', ['a/one'], ['error'], 0]);
  });

  it('refuses an object over the value budget in the streamed state, as in a list', async () => {
    const refused: string[] = [];
    const big = { data: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'])) };
    const s = server([[added('small', '5'), added('big', '6', big), end('6')]]);
    const { informer } = start(s.client, { maxValues: 30, onRefused: () => refused.push('big') });
    await informer.waitForSync();
    expect([keys(informer), refused]).toEqual([['a/small'], ['big']]);
  });
});
