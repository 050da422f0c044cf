// A Loop's first calls leave while its primaries' list is still arriving, once every other cache is complete
// (router/intake/early-primaries.ts): a proxy holds the primaries' WatchList after its first event, and the
// function is called meanwhile; a Loop whose owned kind's list is held calls nothing, but has its function's
// connection open already (router/intake/warm-ahead.ts); every primary once at start.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, respond } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { startLaggingProxy, type LaggingProxy } from './router-lagging-proxy.ts';

let h: RouterHarness;
let ns: string;
let proxy: LaggingProxy;
let fn: ServedFunction;
/** Calls per Loop and ConfigMap name ("loop ns/name"). */
const calls = new Map<string, number>();
const COUNT = 40;
/** Connections the function accepted. */
let connections = 0;

beforeAll(async () => {
  h = await routerHarness('router-early-calls');
  ns = h.suite.namespace;
  proxy = await startLaggingProxy(h.suite.kubeConfig, 0);
  const counter = defineFunction({
    name: 'counter',
    reconcile: (request: ReconcileRequest) => {
      const key = `${request.loop} ${request.object.metadata?.name}`;
      calls.set(key, (calls.get(key) ?? 0) + 1);
      return respond([]);
    },
  });
  fn = await serveFunction(counter, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  fn.server.app.server.on('connection', () => connections++);
  await Promise.all(Array.from({ length: COUNT }, (_, i) => h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: `cm-${i}` }, data: { i: String(i) } } })));
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
  await fn?.close();
});

/** Every ConfigMap of the namespace (kube-root-ca.crt included), by name. */
async function configMapNames(): Promise<string[]> {
  const list = await h.client.request<{ items: Array<{ metadata?: { name?: string } }> }>({ path: `/api/v1/namespaces/${ns}/configmaps` });
  return list.items.map((o) => o.metadata?.name ?? '').sort();
}

const called = (loop: string) => [...calls.keys()].filter((k) => k.startsWith(`${loop} `));
const isWatchList = (kind: string) => (path: string) => path.includes(`/namespaces/${ns}/${kind}?`) && path.includes('sendInitialEvents=true');

describe('first calls before the primary list is complete', () => {
  it('calls a primary while the rest of its list is held, then every primary exactly once', async () => {
    const release = proxy.pauseNextWatch(isWatchList('configmaps'));
    const router = await h.router([inlineLoop('early', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, function: { url: fn.url } })], { kubeConfig: proxy.kubeConfig });
    // Only the list's first event has reached the router: its primary list cannot be complete.
    await eventually('a call while the primaries are still being listed', async () => called('early').length > 0);
    expect(router.loops().find((r) => r.loop.name === 'early')?.stats().synced).toBe(false);
    release();
    await router.waitForLoop('early');
    const names = await configMapNames();
    await eventually('every ConfigMap called', async () => called('early').length === names.length);
    expect(Object.fromEntries([...calls].filter(([k]) => k.startsWith('early ')))).toEqual(Object.fromEntries(names.map((n) => [`early ${n}`, 1])));
    await router.stop();
  });

  it('calls nothing while the list of an owned kind is held, though its primaries are all listed', async () => {
    // A Secret, so the held list has a first event before its initial-events-end bookmark.
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { metadata: { name: 'unowned' }, stringData: { k: 'v' } } });
    const release = proxy.pauseNextWatch(isWatchList('secrets'));
    const loop = inlineLoop('owner', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, owns: [{ apiVersion: 'v1', kind: 'Secret' }], function: { url: fn.url } });
    const router = await h.router([loop], { kubeConfig: proxy.kubeConfig });
    const names = await configMapNames();
    const runner = () => router.loops().find((r) => r.loop.name === 'owner');
    await eventually('every primary cached', async () => runner()?.stats().cachedPrimaries === names.length);
    // A ConfigMap must never be reconciled against a half-listed set of its Secrets.
    expect([called('owner'), runner()?.stats().synced]).toEqual([[], false]);
    release();
    await router.waitForLoop('owner');
    await eventually('every ConfigMap called', async () => called('owner').length === names.length);
    expect(called('owner').every((k) => calls.get(k) === 1)).toBe(true);
    await router.stop();
  });

  it("opens its function's connection as it starts, while its calls still wait for an owned kind's list", async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { metadata: { name: 'ahead-unowned' }, stringData: { k: 'v' } } });
    const release = proxy.pauseNextWatch(isWatchList('secrets'));
    const before = connections;
    const loop = inlineLoop('ahead', ns, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, owns: [{ apiVersion: 'v1', kind: 'Secret' }], function: { url: fn.url } });
    const router = await h.router([loop], { kubeConfig: proxy.kubeConfig });
    // No call can leave before the Secrets' list is complete, yet the connection the first call needs is open.
    await eventually('a connection to the function before any call', async () => connections === before + 1);
    expect(called('ahead')).toEqual([]);
    release();
    await router.waitForLoop('ahead');
    const names = await configMapNames();
    await eventually('every ConfigMap called', async () => called('ahead').length === names.length);
    await router.stop();
  });
});
