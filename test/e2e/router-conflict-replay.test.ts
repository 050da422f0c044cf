// An answer whose patch conflicted is applied again without a call when the ConfigMap changed only in what
// its function never sees, and never when it changed in what the function does see. The router's watch
// lags 1 s (a busy cluster), so the retry after the conflict finds its cache still behind.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { patchAction, respond } from '../../lib/sdk/index.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer } from '../../lib/kube/informer.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { startLaggingProxy, type LaggingProxy } from './router-lagging-proxy.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';

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
  /** The inputs each call for a ConfigMap saw, in order. */
  seen(name: string): string[];
  /** Holds the first answer for `name` until release(); `called` resolves once that call has arrived. */
  holdFirst(name: string): { called: Promise<void>; release(): void };
  close(): Promise<void>;
}

async function echoFunction(): Promise<EchoFunction> {
  const seen = new Map<string, string[]>();
  const holds = new Map<string, { arrived: () => void; released: Promise<void> }>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      void (async () => {
        const { object } = JSON.parse(body) as ReconcileRequest;
        const name = object.metadata?.name ?? '';
        const input = object.metadata?.annotations?.input ?? (object as V1ConfigMap).data?.input ?? '';
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
    holdFirst(name) {
      let arrived!: () => void;
      let release!: () => void;
      const called = new Promise<void>((r) => (arrived = r));
      holds.set(name, { arrived, released: new Promise<void>((r) => (release = r)) });
      return { called, release };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
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
    ],
    { kubeConfig: proxy.kubeConfig },
  );
  await router.waitForLoop('echo-metadata');
  await router.waitForLoop('echo-full');
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

/** Creates a ConfigMap while the function holds its first answer, changes it by `change`, then releases the answer. */
async function changeWhileAnswerHeld(name: string, loop: 'metadata' | 'full', object: Partial<V1ConfigMap>, change: Partial<V1ConfigMap>): Promise<V1ConfigMap> {
  const hold = fn.holdFirst(name);
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  await h.client.request({ method: 'POST', path, body: { apiVersion: 'v1', kind: 'ConfigMap', ...object, metadata: { ...object.metadata, name, labels: { replay: loop } } } });
  await hold.called;
  await h.client.request({ method: 'PATCH', path: `${path}/${name}`, contentType: 'application/merge-patch+json', body: change });
  hold.release();
  return eventually(`${name} labelled echo`, async () => {
    const current = await h.client.request<V1ConfigMap>({ path: `${path}/${name}` });
    return current.metadata?.labels?.echo !== undefined && current;
  });
}

describe('an answer whose patch conflicted', () => {
  it('is applied again, without a call, when only what a metadata-only Loop never sees changed', async () => {
    const before = await replays();
    const final = await changeWhileAnswerHeld('unseen', 'metadata', { metadata: { annotations: { input: 'one' } }, data: { input: 'a' } }, { data: { input: 'b' } });
    expect(final.metadata?.labels?.echo).toBe('one');
    expect(final.data?.input).toBe('b');
    expect(fn.seen('unseen')).toEqual(['one']);
    expect(await replays()).toBe(before + 1);
  }, 60_000);

  it('calls the function again when an annotation it sees changed: the old answer never lands', async () => {
    const before = await replays();
    const final = await changeWhileAnswerHeld('seen', 'metadata', { metadata: { annotations: { input: 'one' } } }, { metadata: { annotations: { input: 'two' } } });
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
    const final = await changeWhileAnswerHeld('data', 'full', { data: { input: 'a' } }, { data: { input: 'b' } });
    expect(final.data?.input).toBe('b');
    expect(final.metadata?.labels?.echo).toBe('b');
    expect(echoes.get('data')).toEqual(['b']);
    expect(fn.seen('data')).toEqual(['a', 'b']);
    expect(await replays()).toBe(before);
  }, 60_000);
});
