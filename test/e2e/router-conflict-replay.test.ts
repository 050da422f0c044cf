// An answer whose patch conflicted is applied again without a call when the ConfigMap changed only in what
// its function never sees, and never when it changed in what the function does see; a metadata-only Loop's
// patch is tested against what its function saw, so a status write meanwhile is no conflict at all. The
// router's watch lags 1 s (a busy cluster), so the retry after the conflict finds its cache still behind.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { patchAction, respond } from '../../lib/sdk/index.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer } from '../../lib/kube/informer.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { startLaggingProxy, type LaggingProxy } from './router-lagging-proxy.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { closeServer } from '../support/close-server.ts';

let h: RouterHarness;
let ns: string;
let proxy: LaggingProxy;
let router: Router;
let fn: EchoFunction;
let configMaps: Informer<V1ConfigMap>;
/** Every echo label value a watch of our own (no lag) saw per ConfigMap, in order. */
const echoes = new Map<string, string[]>();

/**
 * A function over real HTTP (written with the SDK) that labels a ConfigMap `echo=<its input>` (annotation `input`, else
 * data.input), records what each call saw, and can hold its first answer for one ConfigMap.
 */
interface EchoFunction {
  url: string;
  /** The inputs each call for an object saw, in order. */
  seen(name: string): string[];
  /** The labels each call for an object saw, in order. */
  labelsSeen(name: string): Array<Record<string, string>>;
  /** Holds the first answer for `name` until release(); `called` resolves once that call has arrived. */
  holdFirst(name: string): { called: Promise<void>; release(): void };
  close(): Promise<void>;
}

interface EchoCall {
  name: string;
  labels: Record<string, string>;
}

async function echoFunction(): Promise<EchoFunction> {
  const seen = new Map<string, string[]>();
  const calls: EchoCall[] = [];
  const holds = new Map<string, { arrived: () => void; released: Promise<void> }>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      void (async () => {
        const { object } = JSON.parse(body) as ReconcileRequest;
        const name = object.metadata?.name ?? '';
        const input = object.metadata?.annotations?.input ?? (object as V1ConfigMap).data?.input ?? '';
        calls.push({ name, labels: object.metadata?.labels ?? {} });
        seen.set(name, [...(seen.get(name) ?? []), input]);
        const hold = holds.get(name);
        if (hold) {
          holds.delete(name);
          hold.arrived();
          await hold.released;
        }
        // The SDK's patch tests the resourceVersion the function was sent, as most functions' patches do.
        const patch = patchAction(object, (draft) => {
          draft.metadata = { ...draft.metadata, labels: { ...draft.metadata?.labels, echo: input } };
        });
        const response: ReconcileResponse = respond(patch ? [patch] : []);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    seen: (name) => seen.get(name) ?? [],
    labelsSeen: (name) => calls.filter((c) => c.name === name).map((c) => c.labels),
    holdFirst(name) {
      let arrived!: () => void;
      let release!: () => void;
      const called = new Promise<void>((r) => (arrived = r));
      holds.set(name, { arrived, released: new Promise<void>((r) => (release = r)) });
      return { called, release };
    },
    close: () => closeServer(server),
  };
}

beforeAll(async () => {
  h = await routerHarness('router-conflict-replay');
  ns = h.suite.namespace;
  fn = await echoFunction();
  configMaps = new Informer<V1ConfigMap>({ client: h.client, resource: await new ResourceDiscovery(h.client).resolve('v1', 'ConfigMap'), namespace: ns });
  const record = (cm: V1ConfigMap) => {
    const name = cm.metadata?.name ?? '';
    const echo = cm.metadata?.labels?.echo;
    const history = echoes.get(name) ?? [];
    if (echo !== undefined && history.at(-1) !== echo) echoes.set(name, [...history, echo]);
  };
  configMaps.on('add', record);
  configMaps.on('update', record);
  configMaps.start();
  await configMaps.waitForSync();
  proxy = await startLaggingProxy(h.suite.kubeConfig, 1000);
  const configMapKind = { apiVersion: 'v1', kind: 'ConfigMap' };
  router = await h.router(
    [
      inlineLoop('echo-metadata', ns, { for: configMapKind, metadataOnly: true, selector: { matchLabels: { replay: 'metadata' } }, function: { url: fn.url } }),
      inlineLoop('echo-full', ns, { for: configMapKind, selector: { matchLabels: { replay: 'full' } }, function: { url: fn.url } }),
      inlineLoop('echo-pods', ns, { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, selector: { matchLabels: { replay: 'pod' } }, function: { url: fn.url } }),
    ],
    { kubeConfig: proxy.kubeConfig },
  );
  await router.waitForLoop('echo-metadata');
  await router.waitForLoop('echo-full');
  await router.waitForLoop('echo-pods');
});
afterAll(async () => {
  await configMaps?.stop();
  await h?.close();
  await proxy?.close();
  await fn?.close();
});

async function replays(): Promise<number> {
  const metric = (await router.metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'kubeloop_router_conflict_replays_total');
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}

/** The Loop's writes the API server refused as stale (a failed test, 409). */
async function conflicts(loop: string): Promise<number> {
  const metric = (await router.metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'kubeloop_router_actions_total');
  return (metric?.values ?? []).filter((v) => v.labels.loop === loop && v.labels.result === 'conflict').reduce((sum, v) => sum + v.value, 0);
}

/** A merge patch of the object at `path`, as someone else writes it (`subresource`: its status). */
const mergePatch = (body: unknown, subresource = '') => (path: string) => h.client.request({ method: 'PATCH', path: `${path}${subresource}`, contentType: 'application/merge-patch+json', body });

/**
 * Creates an object (a ConfigMap; a pod for the `pod` Loop) while the function holds its first answer, changes it by
 * `change`, then releases the answer, and waits for the echo label.
 */
async function changeWhileAnswerHeld<T extends V1ConfigMap | V1Pod>(name: string, loop: 'metadata' | 'full' | 'pod', object: Partial<T>, change: (path: string) => Promise<unknown>): Promise<T> {
  const hold = fn.holdFirst(name);
  const kind = loop === 'pod' ? 'Pod' : 'ConfigMap';
  const path = `/api/v1/namespaces/${ns}/${kind.toLowerCase()}s`;
  await h.client.request({ method: 'POST', path, body: { apiVersion: 'v1', kind, ...object, metadata: { ...object.metadata, name, labels: { ...object.metadata?.labels, replay: loop } } } });
  await hold.called;
  await change(`${path}/${name}`);
  hold.release();
  return eventually(`${name} labelled echo`, async () => {
    const current = await h.client.request<T>({ path: `${path}/${name}` });
    return current.metadata?.labels?.echo !== undefined && current;
  });
}

describe("a metadata-only Loop's patch of its primary", () => {
  // An annotation holding "&" and "<": the test of it passes only when sent as the API server spells it.
  const pod: Partial<V1Pod> = { metadata: { annotations: { input: 'one', note: 'a&b <c>' } }, spec: { containers: [{ name: 'c', image: 'example.invalid/c' }] } };

  // kwok and the scheduler may write the pod too (binding, status): all of it outside what the function sees.
  it('lands although a status write came between the answer and the patch: no refused write, one call', async () => {
    const before = { conflicts: await conflicts('echo-pods'), replays: await replays() };
    const final = await changeWhileAnswerHeld<V1Pod>('status-written', 'pod', pod, mergePatch({ status: { message: 'written by someone else' } }, '/status'));
    expect(final.metadata?.labels?.echo).toBe('one');
    expect(fn.seen('status-written')).toEqual(['one']);
    expect(await conflicts('echo-pods')).toBe(before.conflicts);
    expect(await replays()).toBe(before.replays);
  }, 60_000);

  it('is refused when a label it saw changed meanwhile, and the function is called again with it: no stale answer lands', async () => {
    const before = await conflicts('echo-pods');
    const final = await changeWhileAnswerHeld<V1Pod>('relabelled', 'pod', pod, mergePatch({ metadata: { labels: { other: 'x' } } }));
    expect(final.metadata?.labels).toMatchObject({ echo: 'one', other: 'x' });
    // The first answer's patch was refused (a conflict), the second call saw the new label.
    expect(await conflicts('echo-pods')).toBe(before + 1);
    expect(fn.labelsSeen('relabelled')).toEqual([{ replay: 'pod' }, { replay: 'pod', other: 'x' }]);
  }, 60_000);

  it("relies on the API server's JSON patch holding a null test true of a missing field only, and comparing strings as Go spells them", async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await h.client.request({ method: 'POST', path, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'null-test', annotations: { note: 'a&b' } } } });
    const patch = (body: unknown) => h.client.request({ method: 'PATCH', path: `${path}/null-test`, contentType: 'application/json-patch+json', body }).then(
      () => 'accepted',
      (error: unknown) => `refused: ${String(error)}`,
    );
    expect(await patch([{ op: 'test', path: '/metadata/labels', value: null }])).toBe('accepted');
    expect(await patch([{ op: 'test', path: '/metadata/annotations', value: null }])).toMatch(/^refused: .*422/);
    expect(await patch('[{"op":"test","path":"/metadata/annotations","value":{"note":"a&b"}}]')).toMatch(/^refused: .*422/);
    expect(await patch('[{"op":"test","path":"/metadata/annotations","value":{"note":"a\\u0026b"}}]')).toBe('accepted');
  }, 60_000);
});

describe('an answer whose patch conflicted', () => {
  it('is applied again, without a call, when only managedFields changed (a full-object Loop)', async () => {
    const before = await replays();
    // Another field manager applies the same data: the object changes only in managedFields (and resourceVersion).
    const apply = (path: string) =>
      h.client.request({ method: 'PATCH', path, query: { fieldManager: 'someone-else' }, contentType: 'application/apply-patch+yaml', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unseen' }, data: { input: 'a' } } });
    const final = await changeWhileAnswerHeld<V1ConfigMap>('unseen', 'full', { data: { input: 'a' } }, apply);
    expect(final.metadata?.labels?.echo).toBe('a');
    expect(final.metadata?.managedFields?.map((m) => m.manager)).toContain('someone-else');
    expect(fn.seen('unseen')).toEqual(['a']);
    expect(await replays()).toBe(before + 1);
  }, 60_000);

  it('calls the function again when an annotation it sees changed: the old answer never lands', async () => {
    const before = await replays();
    const final = await changeWhileAnswerHeld<V1ConfigMap>('seen', 'metadata', { metadata: { annotations: { input: 'one' } } }, mergePatch({ metadata: { annotations: { input: 'two' } } }));
    expect(final.metadata?.annotations?.input).toBe('two');
    expect(final.metadata?.labels?.echo).toBe('two');
    expect(echoes.get('seen')).toEqual(['two']);
    expect(fn.seen('seen')).toEqual(['one', 'two']);
    expect(await replays()).toBe(before);
    // The flight recorder tells the story: the create's reconcile conflicted, the annotation's change was answered.
    const history = await eventually('three reconciles of seen in the flight recorder', async () => {
      const entries = router.history.history('echo-metadata', `${ns}/seen`);
      return entries.length >= 3 && entries;
    });
    const conflicted = history.find((e) => e.outcome === 'conflict');
    expect(conflicted?.triggers[0]).toMatchObject({ source: 'primary', type: 'ADDED', object: `${ns}/seen` });
    expect(conflicted?.writes).toEqual([expect.objectContaining({ action: `patch v1/ConfigMap ${ns}/seen`, result: 'conflict' })]);
    const answered = history.find((e) => e.outcome === 'ok' && e.writes.some((w) => w.result === 'applied'));
    expect(answered?.triggers.some((t) => t.type === 'MODIFIED')).toBe(true);
    expect(answered?.actions).toEqual([`patch v1/ConfigMap ${ns}/seen`]);
    expect(answered?.durations.callMs).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it('calls the function again when data changed under a full-object Loop, for which data is input', async () => {
    const before = await replays();
    const final = await changeWhileAnswerHeld<V1ConfigMap>('data', 'full', { data: { input: 'a' } }, mergePatch({ data: { input: 'b' } }));
    expect(final.data?.input).toBe('b');
    expect(final.metadata?.labels?.echo).toBe('b');
    expect(echoes.get('data')).toEqual(['b']);
    expect(fn.seen('data')).toEqual(['a', 'b']);
    expect(await replays()).toBe(before);
  }, 60_000);
});
