// An informer whose KubeClient is closed ends its loop instead of retrying forever (every attempt would fail at once
// with KubeClientClosedError): logged once, waitForSync() rejects saying why, the cache stays as it was and no handler
// hears more. test/e2e/informer-client-close.test.ts has the same on the real API server and KubeClient.
import { PassThrough, Readable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Informer } from './informer.ts';
import { KubeClientClosedError, type KubeClient } from './kube-client.ts';

const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const list = { metadata: { resourceVersion: '5' }, items: [{ metadata: { name: 'one', namespace: 'a', uid: 'one', resourceVersion: '5' } }] };

/** A client as KubeClient behaves once closed: its open watch ends with KubeClientClosedError, every request fails at once with it. */
function closable() {
  let closed = false;
  const requests: string[] = [];
  const open = new Set<Readable>();
  const client = {
    serverKey: {},
    requestText: (request: { path: string }) => {
      requests.push('list');
      return closed ? Promise.reject(new KubeClientClosedError(request, false)) : Promise.resolve(JSON.stringify(list));
    },
    streamResponse: (request: { path: string }) => {
      requests.push('watch');
      if (closed) return Promise.reject(new KubeClientClosedError(request, false));
      const body = new PassThrough();
      open.add(body);
      return Promise.resolve({ body, contentType: 'application/json;stream=watch' });
    },
  } as unknown as KubeClient;
  const close = () => {
    closed = true;
    for (const body of open) body.destroy(new KubeClientClosedError({ path: '/api/v1/configmaps' }, true));
  };
  return { client, requests, close, watching: () => open.size > 0 };
}

let informer: Informer | undefined;
const logs: Array<{ level: number; msg: string }> = [];
const events: string[] = [];
beforeEach(() => vi.useFakeTimers());
afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  logs.length = 0;
  events.length = 0;
  vi.useRealTimers();
});

function start(client: KubeClient): Informer {
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as { level: number; msg: string }) });
  informer = new Informer({ client, resource, watchList: false, logger, backoff: { baseMs: 250, maxMs: 1000, jitter: 0 } });
  for (const event of ['add', 'update', 'delete', 'restart', 'synced', 'watching'] as const) informer.on(event, () => void events.push(event));
  return informer.start();
}

describe('Informer whose KubeClient was closed', () => {
  it('ends before it synced: one attempt, waitForSync() rejects saying the client was closed, one info line', async () => {
    const s = closable();
    s.close();
    const informer = start(s.client);
    let outcome: unknown = 'pending';
    informer.waitForSync().then(() => (outcome = 'synced'), (error: unknown) => (outcome = error));
    // No backoff and no retry: ten minutes later it has still asked once.
    await vi.advanceTimersByTimeAsync(600_000);
    expect(s.requests).toEqual(['list']);
    expect(outcome).toMatchObject({ message: 'informer ConfigMap.v1 stopped before it synced: its KubeClient was closed' });
    expect((outcome as Error).cause).toBeInstanceOf(KubeClientClosedError);
    expect([informer.hasSynced, informer.restarts, events]).toEqual([false, 0, []]);
    expect(logs.map((l) => [l.level, l.msg])).toEqual([[30, 'KubeClient closed; informer stopped']]);
    // A later caller learns the same at once; stop() still resolves.
    await expect(informer.waitForSync()).rejects.toThrow('its KubeClient was closed');
    await informer.stop();
  });

  it('ends when its open watch is cut: the cache keeps what it held, synced, and no handler hears more', async () => {
    const s = closable();
    const informer = start(s.client);
    await informer.waitForSync();
    await vi.waitFor(() => expect(s.watching()).toBe(true));
    events.length = 0;
    s.close();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(s.requests).toEqual(['list', 'watch']);
    expect([informer.hasSynced, [...informer.store.keys()], informer.restarts, events]).toEqual([true, ['a/one'], 0, []]);
    expect(logs.filter((l) => l.level >= 30).map((l) => l.msg)).toEqual(['KubeClient closed; informer stopped']);
    await informer.waitForSync();
    await informer.stop();
  });
});
