// The informer lists in pages (limit + continue) on the real API server: a list longer than one page
// must reach the cache whole. Found by bench:router, where only the first 500 of 1,000 pods were cached.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer, stripManagedFields } from '../../lib/kube/informer.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';

let suite: ClusterSuite;
let client: KubeClient;

beforeAll(async () => {
  suite = await setupClusterSuite('router-informer-paging');
  client = await KubeClient.fromKubeConfig(suite.kubeConfig);
});
afterAll(async () => {
  await client?.close();
  await suite?.cleanup();
});

describe('Informer paging', () => {
  for (const metadataOnly of [false, true]) {
    it(`caches every object of a list spanning several pages, each normalised as its page arrived (${metadataOnly ? 'metadata-only' : 'full objects'})`, async () => {
      const label = `paged-${metadataOnly ? 'meta' : 'full'}`;
      const names = Array.from({ length: 7 }, (_, i) => `${label}-${i}`);
      for (const name of names) {
        await client.request({ method: 'POST', path: `/api/v1/namespaces/${suite.namespace}/configmaps`, body: { metadata: { name, labels: { t: label } } } });
      }
      const resource = await new ResourceDiscovery(client).resolve('v1', 'ConfigMap');
      const informer = new Informer<V1ConfigMap>({ client, resource, namespace: suite.namespace, labelSelector: `t=${label}`, metadataOnly, pageSize: 3, transform: stripManagedFields, watchList: false });
      informer.start();
      try {
        await informer.waitForSync();
        expect([...informer.store.keys()].sort()).toEqual(names.map((n) => `${suite.namespace}/${n}`).sort());
        // The list's items went through the informer's transform page by page: no managedFields, the real kind.
        for (const object of informer.store.list()) expect([object.apiVersion, object.kind, object.metadata?.managedFields]).toEqual(['v1', 'ConfigMap', undefined]);
      } finally {
        await informer.stop();
      }
    });
  }
});
