// A watch the real API server expires (410 Gone, "too old resource version") while objects are created,
// changed and deleted: the informer relists, its cache matches the server, handlers see each change (a delete
// as a delete, no ghost), a Loop's function is called for what changed, and the restart is counted by reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer } from '../../lib/kube/informer.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { serveFunction } from '../../lib/runtime/index.ts';
import { defineFunction, respond, type KubeObject } from '../../lib/sdk/index.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { startLaggingProxy, type LaggingProxy } from './router-lagging-proxy.ts';
import { inlineLoop, installCrds, looseCrd, routerHarness, type RouterHarness } from '../support/router-harness.ts';

// A kind of its own: its watch cache starts at the CRD's creation, so resourceVersion 1 is always too old.
const GAPS_CRD = looseCrd('relist.kubeloop.dev', 'Gap', 'gaps');
const CRD = GAPS_CRD.metadata.name;
const GAP = { apiVersion: 'relist.kubeloop.dev/v1', kind: 'Gap' };
type Gap = KubeObject & { spec?: { value?: string } };

let h: RouterHarness;
let ns: string;
let router: Router;
/** One proxy per watcher: each gap holds and expires exactly that watcher's watch. */
let routerProxy: LaggingProxy;
let informerProxy: LaggingProxy;
let viaProxy: KubeClient;
let informer: Informer<Gap>;
/** What the Loop's function was called with: `name value`. */
const calls: string[] = [];
/** What the informer's handlers were told, in order. */
const seen: string[] = [];
const restarts: string[] = [];
const closers: Array<() => Promise<unknown>> = [];

const gapsPath = () => `/apis/relist.kubeloop.dev/v1/namespaces/${ns}/gaps`;
const create = (name: string, value: string) => h.client.request({ method: 'POST', path: gapsPath(), body: { ...GAP, metadata: { name }, spec: { value } } });
const change = (name: string, value: string) =>
  h.client.request({ method: 'PATCH', path: `${gapsPath()}/${name}`, contentType: 'application/merge-patch+json', body: { spec: { value } } });

beforeAll(async () => {
  h = await routerHarness('router-informer-relist');
  ns = h.suite.namespace;
  await installCrds(h.client, [GAPS_CRD]);
  const fn = await serveFunction(
    defineFunction({
      name: 'relist-recorder',
      reconcile: ({ object }) => {
        calls.push(`${object.metadata?.name} ${(object as Gap).spec?.value}`);
        return respond([]);
      },
    }),
    { port: 0, host: '127.0.0.1', logLevel: 'warn' },
  );
  closers.push(() => fn.close());
  routerProxy = await startLaggingProxy(h.suite.kubeConfig, 0);
  informerProxy = await startLaggingProxy(h.suite.kubeConfig, 0);
  router = await h.router([inlineLoop('relist', ns, { for: GAP, function: { url: fn.url } })], { kubeConfig: routerProxy.kubeConfig });
  await router.waitForLoop('relist');
  viaProxy = await KubeClient.fromKubeConfig(informerProxy.kubeConfig);
  // Discovery may lag the CRD's Established condition.
  const resource = await eventually('Gap discoverable', () => new ResourceDiscovery(viaProxy).resolve(GAP.apiVersion, GAP.kind));
  informer = new Informer<Gap>({ client: viaProxy, resource, namespace: ns, backoff: { baseMs: 100, maxMs: 500 } });
  informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
  informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${o.spec?.value}`));
  informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
  informer.on('restart', (reason) => restarts.push(reason));
  informer.start();
  await informer.waitForSync();
});
afterAll(async () => {
  await informer?.stop();
  await viaProxy?.close();
  await h?.client.request({ method: 'DELETE', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}` }).catch(() => {});
  await h?.close();
  for (const close of closers) await close().catch(() => {});
  await routerProxy?.close();
  await informerProxy?.close();
});

/** An object's identity and version: `uid resourceVersion`. */
const version = (o: Gap | undefined) => `${o?.metadata?.uid} ${o?.metadata?.resourceVersion}`;
/** The server's objects, key -> version. */
async function onServer(): Promise<Record<string, string>> {
  const list = await h.client.request<{ items: Gap[] }>({ path: gapsPath() });
  return Object.fromEntries(list.items.map((o) => [`${ns}/${o.metadata?.name}`, version(o)]));
}
/** The informer's cache, key -> version. */
function cached(): Record<string, string> {
  return Object.fromEntries([...informer.store.keys()].map((key) => [key, version(informer.store.get(key))]));
}

const same = (a: Record<string, string>, b: Record<string, string>) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

async function goneRestarts(): Promise<number> {
  const metric = (await router.metrics.registry.getMetricsAsJSON()).find((m) => m.name === 'kubeloop_router_watch_restarts_total');
  return (metric?.values ?? []).filter((v) => v.labels.reason === 'gone' && String(v.labels.resource).includes('Gap')).reduce((sum, v) => sum + v.value, 0);
}

describe('a watch the API server expires (410 Gone)', () => {
  it('relists: the cache matches the server, handlers and the Loop see every change made in the gap', async () => {
    await create('keep', '1');
    await create('changed', '1');
    await create('doomed', '1');
    await create('reborn', '1');
    await eventually('the four objects cached', async () => same(cached(), await onServer()));
    await eventually('the function called for the four', async () => ['keep 1', 'changed 1', 'doomed 1', 'reborn 1'].every((c) => calls.includes(c)));
    expect(await goneRestarts()).toBe(0);

    // The gap: both watches broken and held while the objects change.
    const before = seen.length;
    const gaps = (path: string) => path.includes('/gaps?');
    routerProxy.holdWatches(gaps);
    informerProxy.holdWatches(gaps);
    await eventually('both watches resumed and held', async () => routerProxy.heldWatches() > 0 && informerProxy.heldWatches() > 0);
    await create('born', '1');
    await change('changed', '2');
    await h.client.request({ method: 'DELETE', path: `${gapsPath()}/doomed` });
    // Made again under its name: another object (another uid), not an update of the old one.
    await h.client.request({ method: 'DELETE', path: `${gapsPath()}/reborn` });
    await create('reborn', '2');
    routerProxy.expireHeldWatches();
    informerProxy.expireHeldWatches();

    await eventually('the informer relisted after 410', async () => restarts.includes('gone'));
    const server = await onServer();
    expect(Object.keys(server).sort()).toEqual([`${ns}/born`, `${ns}/changed`, `${ns}/keep`, `${ns}/reborn`]);
    await eventually('the cache matches the server', async () => same(cached(), server));
    // Exactly the changes made in the gap, the delete as a delete: nothing for the unchanged object.
    expect(seen.slice(before).sort()).toEqual(['add born', 'add reborn', 'delete doomed', 'delete reborn', 'update changed 2']);
    expect(informer.store.get(`${ns}/doomed`)).toBeUndefined();

    await eventually('the function called for what changed in the gap', async () => ['born 1', 'changed 2', 'reborn 2'].every((c) => calls.includes(c)));
    await eventually('the restart counted with its reason', async () => (await goneRestarts()) >= 1);

    // The watch resumed from the relist: a later change arrives by watch, with no further relist.
    await change('keep', '2');
    await eventually('a change after the relist', async () => seen.includes('update keep 2') && calls.includes('keep 2'));
    expect(restarts.filter((r) => r === 'gone')).toEqual(['gone']);
  });
});
