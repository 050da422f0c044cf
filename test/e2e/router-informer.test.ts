// The resilient informer of lib/kube against the real API server: list+watch, updates and deletes,
// metadata-only objects, resuming across server-side watch timeouts without missing a change, and its watchdog.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer } from '../../lib/kube/informer.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { CONTROLLER_UID_INDEX, controllerUidOf } from '../../lib/kube/object-store.ts';
import type { WatchTimeouts } from '../../lib/kube/watch-watchdog.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { startLaggingProxy } from './router-lagging-proxy.ts';

let suite: ClusterSuite;
let client: KubeClient;
let discovery: ResourceDiscovery;

beforeAll(async () => {
  suite = await setupClusterSuite('router-informer');
  client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  discovery = new ResourceDiscovery(client);
});
afterAll(async () => {
  await client?.close();
  await suite?.cleanup();
});

const cmPath = () => `/api/v1/namespaces/${suite.namespace}/configmaps`;

describe('Informer on the real API server', () => {
  it('lists existing objects, then sees adds, updates and deletes, indexed by controller owner', async () => {
    const owner = await client.request<V1ConfigMap>({ method: 'POST', path: cmPath(), body: { metadata: { name: 'before', labels: { t: 'crud' } }, data: { a: '1' } } });
    await client.request({ method: 'POST', path: cmPath(), body: { metadata: { name: 'gone', labels: { t: 'crud' } } } });
    const resource = await discovery.resolve('v1', 'ConfigMap');
    const informer = new Informer<V1ConfigMap>({ client, resource, namespace: suite.namespace, labelSelector: 't=crud', indexers: { [CONTROLLER_UID_INDEX]: controllerUidOf } });
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(`add ${o.metadata?.name}`));
    informer.on('update', (o) => seen.push(`update ${o.metadata?.name} ${o.data?.a}`));
    informer.on('delete', (o) => seen.push(`delete ${o.metadata?.name}`));
    informer.start();
    try {
      await informer.waitForSync();
      expect(informer.store.get(`${suite.namespace}/before`)?.kind).toBe('ConfigMap');
      // A real owner: the garbage collector deletes children whose owner does not exist.
      const uid = owner.metadata?.uid ?? '';
      const ownerRefs = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'before', uid, controller: true }];
      await client.request({ method: 'POST', path: cmPath(), body: { metadata: { name: 'after', labels: { t: 'crud' }, ownerReferences: ownerRefs }, data: { a: '1' } } });
      await client.request({ method: 'PATCH', path: `${cmPath()}/after`, contentType: 'application/merge-patch+json', body: { data: { a: '2' } } });
      await client.request({ method: 'DELETE', path: `${cmPath()}/gone` });
      await eventually('all events', async () => seen.length >= 5 && seen);
      expect(seen.slice(0, 2).sort()).toEqual(['add before', 'add gone']);
      expect(seen.slice(2)).toEqual(['add after', 'update after 2', 'delete gone']);
      expect(informer.store.byIndex(CONTROLLER_UID_INDEX, uid).map((o) => o.metadata?.name)).toEqual(['after']);
    } finally {
      await informer.stop();
    }
  });

  it('caches only metadata in metadata-only mode, with the real apiVersion and kind', async () => {
    await client.request({ method: 'POST', path: cmPath(), body: { metadata: { name: 'meta', labels: { x: 'y' } }, data: { secret: 'big' } } });
    const resource = await discovery.resolve('v1', 'ConfigMap');
    const informer = new Informer<V1ConfigMap>({ client, resource, namespace: suite.namespace, metadataOnly: true });
    informer.start();
    try {
      await informer.waitForSync();
      const cached = informer.store.get(`${suite.namespace}/meta`);
      expect(cached?.apiVersion).toBe('v1');
      expect(cached?.kind).toBe('ConfigMap');
      expect(cached?.metadata?.labels).toEqual({ x: 'y' });
      expect(cached?.data).toBeUndefined();
      await client.request({ method: 'PATCH', path: `${cmPath()}/meta`, contentType: 'application/merge-patch+json', body: { metadata: { labels: { x: 'z' } } } });
      await eventually('watched label change', async () => informer.store.get(`${suite.namespace}/meta`)?.metadata?.labels?.x === 'z');
      expect(informer.store.get(`${suite.namespace}/meta`)?.kind).toBe('ConfigMap');
    } finally {
      await informer.stop();
    }
  });

  it('resumes after each server-side watch timeout without missing a change', async () => {
    const resource = await discovery.resolve('v1', 'ConfigMap');
    // A 1-2 s server-side timeout, bookmarks heard or not, forces several reconnects while the changes below happen.
    const informer = new Informer<V1ConfigMap>({ client, resource, namespace: suite.namespace, watchTimeoutSeconds: 1, bookmarkedWatchTimeoutSeconds: 1, labelSelector: 'burst=yes' });
    informer.start();
    try {
      await informer.waitForSync();
      for (let i = 0; i < 30; i++) {
        await client.request({ method: 'POST', path: cmPath(), body: { metadata: { name: `burst-${i}`, labels: { burst: 'yes' } } } });
        await new Promise((r) => setTimeout(r, 100));
      }
      await eventually('all 30 configmaps cached', async () => informer.store.size === 30);
      // Normal server-side timeouts do not count as restarts: only errors and relists do.
      expect(informer.restarts).toBe(0);
    } finally {
      await informer.stop();
    }
  });

  it("tells of the server's bookmarks on a quiet watch, which change nothing in the cache and keep it open past its silence limit", async () => {
    const resource = await discovery.resolve('v1', 'ConfigMap');
    // The API server sends a bookmark about once a minute on every open watch (60.8 s after this one opened, once).
    // Silence is counted from the WatchList's initial-events-end bookmark: were the heartbeat not heard, the watch
    // would end as silent 75 s after it.
    const informer = new Informer<V1ConfigMap>({ client, resource, namespace: suite.namespace, watchTimeoutSeconds: 300, watchSilenceMs: 75_000, labelSelector: 'bookmarked=yes' });
    let bookmarks = 0;
    let changes = 0;
    informer.on('bookmark', () => (bookmarks += 1));
    for (const event of ['add', 'update', 'delete'] as const) informer.on(event, () => (changes += 1));
    informer.start();
    try {
      await informer.waitForSync();
      const synced = Date.now();
      await eventually('a bookmark received', async () => bookmarks > 0, 100_000);
      await new Promise((r) => setTimeout(r, Math.max(0, synced + 85_000 - Date.now())));
      expect([changes, informer.store.size, informer.restarts]).toEqual([0, 0, 0]);
    } finally {
      await informer.stop();
    }
  }, 150_000);

  it('detects a watch still open past its timeout with its watchdog, reconnects, and misses nothing', async () => {
    // 1 s whether a bookmark was heard or not; silence (180 s by default) plays no part.
    await silentWatchRecovers('silent', { watchTimeoutSeconds: 1, bookmarkedWatchTimeoutSeconds: 1, watchdogGraceMs: 1000 });
  });

  it('ends a watch that hears nothing for its silence limit, minutes before its timeout, and misses nothing', async () => {
    // The WatchList's initial-events-end bookmark shows the server sends bookmarks: from then on 3 s of silence
    // ends a watch whose deadline is 300-600 s (plus 30 s) away.
    await silentWatchRecovers('hushed', { watchTimeoutSeconds: 300, bookmarkedWatchTimeoutSeconds: 300, watchSilenceMs: 3000 });
  });

  it('reports an unknown kind by name instead of watching nothing', async () => {
    await expect(discovery.resolve('v1', 'NoSuchKind')).rejects.toThrow('unknown kind NoSuchKind in v1');
  });
});

/**
 * An informer through a proxy that is frozen right after the sync, a change made meanwhile: its watchdog must end the
 * watch as silent within 30 s (its timeout and grace or its silence, as `timeouts` say), and the change arrive once the
 * proxy thaws.
 */
async function silentWatchRecovers(label: string, timeouts: WatchTimeouts): Promise<void> {
  const proxy = await startLaggingProxy(suite.kubeConfig, 0);
  const viaProxy = await KubeClient.fromKubeConfig(proxy.kubeConfig);
  const resource = await discovery.resolve('v1', 'ConfigMap');
  const informer = new Informer<V1ConfigMap>({ client: viaProxy, resource, namespace: suite.namespace, labelSelector: `${label}=yes`, ...timeouts, backoff: { baseMs: 100, maxMs: 500 } });
  const restarts: string[] = [];
  informer.on('restart', (reason) => restarts.push(reason));
  informer.start();
  try {
    await informer.waitForSync();
    proxy.setFrozen(true);
    await client.request({ method: 'POST', path: cmPath(), body: { metadata: { name: `while-${label}`, labels: { [label]: 'yes' } } } });
    await eventually('a silent watch detected', async () => restarts.includes('silent'), 30_000);
    expect(informer.store.get(`${suite.namespace}/while-${label}`)).toBeUndefined();
    proxy.setFrozen(false);
    await eventually('the change made while silent arrives', async () => informer.store.get(`${suite.namespace}/while-${label}`) !== undefined, 15_000);
  } finally {
    await informer.stop();
    await viaProxy.close();
    await proxy.close();
  }
}
