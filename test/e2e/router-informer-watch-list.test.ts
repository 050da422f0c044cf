// The informer's WatchList on the real API server: one request fills the cache (synced at the initial-events-end
// bookmark) and goes on as the watch, for whole objects and metadata-only, namespaced and cluster-wide, with
// selectors; it asks for the long timeout, so it is not renewed at the short one; a stream broken before its end
// starts over cleanly; a server that refuses it gets list + watch, once, and so does one that takes it for a plain
// watch, at its fill deadline.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer, stripManagedFields, type InformerOptions } from '../../lib/kube/informer.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { startLaggingProxy, type LaggingProxy } from './router-lagging-proxy.ts';

let suite: ClusterSuite;
/** The informers' client (its requests counted); writes go through `writer`. */
let client: KubeClient;
let writer: KubeClient;
let resource: ResourceInfo;
let ns: string;
/** Requests `client` sent, by method. */
const sent: string[] = [];
const informers: Informer<V1ConfigMap>[] = [];
const closers: Array<() => Promise<unknown>> = [];

const NAMES = ['a', 'b', 'c', 'd', 'e'];
const configMaps = () => `/api/v1/namespaces/${ns}/configmaps`;

beforeAll(async () => {
  suite = await setupClusterSuite('router-informer-watch-list');
  ns = suite.namespace;
  client = await KubeClient.fromKubeConfig(suite.kubeConfig, { onRequest: (s) => sent.push(s.method) });
  writer = await KubeClient.fromKubeConfig(suite.kubeConfig);
  resource = await new ResourceDiscovery(client).resolve('v1', 'ConfigMap');
  for (const name of NAMES) await writer.request({ method: 'POST', path: configMaps(), body: { metadata: { name, labels: { t: 'wl' } }, data: { v: '1' } } });
  // Not selected: never cached.
  await writer.request({ method: 'POST', path: configMaps(), body: { metadata: { name: 'other' }, data: { v: '1' } } });
});
afterAll(async () => {
  for (const informer of informers) await informer.stop();
  for (const close of closers) await close().catch(() => {});
  await client?.close();
  await writer?.close();
  await suite?.cleanup();
});

function start(options: Partial<InformerOptions<V1ConfigMap>>, via: KubeClient = client): { informer: Informer<V1ConfigMap>; adds: string[]; restarts: string[] } {
  const informer = new Informer<V1ConfigMap>({ client: via, resource, labelSelector: 't=wl', transform: stripManagedFields, backoff: { baseMs: 100, maxMs: 500 }, ...options });
  const adds: string[] = [];
  const restarts: string[] = [];
  informer.on('add', (o) => adds.push(o.metadata?.name ?? ''));
  informer.on('restart', (reason) => restarts.push(reason));
  informers.push(informer.start());
  return { informer, adds, restarts };
}
const names = (i: Informer<V1ConfigMap>) => i.store.list().map((o) => o.metadata?.name).sort();

async function proxied(): Promise<{ proxy: LaggingProxy; via: KubeClient }> {
  const proxy = await startLaggingProxy(suite.kubeConfig, 0);
  const via = await KubeClient.fromKubeConfig(proxy.kubeConfig);
  closers.push(() => via.close(), () => proxy.close());
  return { proxy, via };
}

describe('Informer WatchList on the real API server', () => {
  it('fills the cache with one request, synced at the initial-events-end bookmark, and watches on over the same stream', async () => {
    const before = sent.length;
    const { informer, adds, restarts } = start({ namespace: ns });
    await informer.waitForSync();
    expect(informer.filledBy).toBe('watch-list');
    // No list page: the WatchList was the only request.
    expect(sent.slice(before)).toEqual(['GET']);
    expect(names(informer)).toEqual(NAMES);
    expect(adds.sort()).toEqual(NAMES);
    for (const o of informer.store.list()) expect([o.apiVersion, o.kind, o.data?.v, o.metadata?.managedFields]).toEqual(['v1', 'ConfigMap', '1', undefined]);

    await writer.request({ method: 'PATCH', path: `${configMaps()}/a`, contentType: 'application/merge-patch+json', body: { data: { v: '2' } } });
    await writer.request({ method: 'POST', path: configMaps(), body: { metadata: { name: 'f', labels: { t: 'wl' } } } });
    await eventually('the change and the new object arrive by the watch', async () => informer.store.get(`${ns}/a`)?.data?.v === '2' && informer.store.get(`${ns}/f`) !== undefined);
    await writer.request({ method: 'DELETE', path: `${configMaps()}/f` });
    await eventually('the delete arrives', async () => informer.store.get(`${ns}/f`) === undefined);
    expect(sent.slice(before)).toEqual(['GET']);
    expect(restarts).toEqual([]);
  });

  it('asks for the long timeout: the stream outlives the short one, unrenewed, and still brings changes', async () => {
    // A client of its own: were this WatchList late for its deadline, the fallback to lists is remembered per client.
    const own = await KubeClient.fromKubeConfig(suite.kubeConfig);
    closers.push(() => own.close());
    // Filled within 3-6 s or listed instead; the watch it goes on as asks the server for 300-600 s.
    const { informer, restarts } = start({ namespace: ns, watchTimeoutSeconds: 3, bookmarkedWatchTimeoutSeconds: 300 }, own);
    let watches = 0;
    informer.on('watching', () => (watches += 1));
    await informer.waitForSync();
    expect(informer.filledBy).toBe('watch-list');
    // Past the short timeout's 6 s, when the tree before renewed it, and a second for the server's end to arrive.
    await new Promise((r) => setTimeout(r, 7500));
    await writer.request({ method: 'PATCH', path: `${configMaps()}/c`, contentType: 'application/merge-patch+json', body: { data: { v: 'long' } } });
    await eventually('the change arrives by the first stream', async () => informer.store.get(`${ns}/c`)?.data?.v === 'long');
    expect([watches, restarts]).toEqual([1, []]);
  });

  it('lists, then watches, where a proxy takes the WatchList for a plain watch: at its fill deadline, not its timeout', async () => {
    const { proxy, via } = await proxied();
    proxy.ignoreWatchList(true);
    // The end is due within 1-2 s; the server was asked to keep the watch 1,800 s or more (past the test's timeout).
    const { informer, restarts } = start({ namespace: ns, watchTimeoutSeconds: 1 }, via);
    await informer.waitForSync();
    expect([informer.filledBy, names(informer), restarts]).toEqual(['list', NAMES, []]);
    await writer.request({ method: 'PATCH', path: `${configMaps()}/d`, contentType: 'application/merge-patch+json', body: { data: { v: 'plain' } } });
    await eventually('the change arrives by the watch after the list', async () => informer.store.get(`${ns}/d`)?.data?.v === 'plain');
  });

  it('streams metadata only, cluster-wide, with a field selector', async () => {
    const { informer } = start({ metadataOnly: true, fieldSelector: `metadata.namespace=${ns}` });
    await informer.waitForSync();
    expect(informer.filledBy).toBe('watch-list');
    expect(names(informer)).toEqual(NAMES);
    for (const o of informer.store.list()) expect([o.apiVersion, o.kind, o.metadata?.namespace, o.data]).toEqual(['v1', 'ConfigMap', ns, undefined]);
  });

  it('lists, then watches, with watchList off', async () => {
    const { informer } = start({ namespace: ns, watchList: false });
    await informer.waitForSync();
    expect([informer.filledBy, names(informer)]).toEqual(['list', NAMES]);
  });

  it('starts over when the stream breaks before the initial state ends: the cache is whole, each object added once', async () => {
    const { proxy, via } = await proxied();
    proxy.cutNextWatch((path) => path.includes('sendInitialEvents=true'));
    const { informer, adds, restarts } = start({ namespace: ns }, via);
    await informer.waitForSync();
    expect(restarts).toEqual(['error']);
    expect([informer.filledBy, names(informer)]).toEqual(['watch-list', NAMES]);
    expect(adds.sort()).toEqual(NAMES);
  });

  it('lists, then watches, where the server refuses WatchList, and asks that server once', async () => {
    const { proxy, via } = await proxied();
    proxy.refuseWatchList(true);
    const first = start({ namespace: ns }, via);
    const second = start({ namespace: ns, metadataOnly: true }, via);
    await Promise.all([first.informer.waitForSync(), second.informer.waitForSync()]);
    const third = start({ namespace: ns }, via);
    await third.informer.waitForSync();
    for (const { informer, restarts } of [first, second, third]) expect([informer.filledBy, names(informer), restarts]).toEqual(['list', NAMES, []]);
    // The two started together may both have asked; the third, started after, did not.
    expect(proxy.watchListsRefused()).toBeLessThanOrEqual(2);
    const asked = proxy.watchListsRefused();
    expect(asked).toBeGreaterThanOrEqual(1);

    // The plain watch after the list works as ever.
    await writer.request({ method: 'PATCH', path: `${configMaps()}/b`, contentType: 'application/merge-patch+json', body: { data: { v: '3' } } });
    await eventually('the change arrives by the watch', async () => third.informer.store.get(`${ns}/b`)?.data?.v === '3');
    expect(proxy.watchListsRefused()).toBe(asked);
  });
});
