// A create whose answer is lost: the API server creates the pod, but the connection breaks halfway
// through its answer, while the router's cache lags by 1 s (the soak's watch-cut fault did exactly this).
// The router must neither count the create as failed and create the pod again on its stale cache, nor
// lose it: a watch of its own sees exactly spec.replicas pods, never more.
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Informer } from '../../lib/kube/informer.ts';
import { eventually } from '../cluster/eventually.ts';
import { laggingPodSetSuite, type LaggingPodSetSuite } from './lagging-podset-suite.ts';
import type { LaggingProxy } from './router-lagging-proxy.ts';
import { podSetLoop, type RouterHarness } from '../support/router-harness.ts';

let suite: LaggingPodSetSuite;
let h: RouterHarness;
let ns: string;
let pods: Informer<V1Pod>;
let proxy: LaggingProxy;

beforeAll(async () => {
  suite = await laggingPodSetSuite('router-lost-create', 1000);
  ({ h, ns, pods, proxy } = suite);
});
afterAll(async () => {
  await suite?.close();
});

describe('a create whose answer is lost', () => {
  it('creates each pod of a PodSet once when the first pod POST answer breaks mid-body', async () => {
    const { url } = await h.serve('podset');
    const router = await h.router([podSetLoop(ns, url)], { kubeConfig: proxy.kubeConfig });
    await router.waitForLoop('podset');
    proxy.cutNext((method, path) => method === 'POST' && path.startsWith(`/api/v1/namespaces/${ns}/pods`));
    const ps = await h.client.request<{ metadata: { uid: string } }>({
      method: 'POST',
      path: `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`,
      body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'cut' }, spec: { replicas: 3 } },
    });
    const owned = (p: V1Pod) => p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === ps.metadata.uid) ?? false;
    const created = new Set<string>();
    const off = pods.on('add', (p) => owned(p) && created.add(p.metadata?.name ?? ''));
    try {
      await eventually('3 pods', async () => pods.store.list().filter(owned).length === 3, 60_000);
      // Past the cache's lag and the retry backoff: a wrongly repeated create would have landed by now.
      await eventually('the PodSet reports 3 available', async () => {
        const current = await h.client.request<{ status?: { availableReplicas?: number } }>({ path: `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets/cut` });
        return current.status?.availableReplicas === 3;
      }, 60_000);
      expect(created.size).toBe(3);
    } finally {
      off();
    }
  }, 120_000);
});
