// A PodSet scale-up under a lagging cache: the router talks to the API server through a proxy that holds
// its watch streams back by 1 s, so right after its creates its cache still shows too few pods. Without
// expectations the next call (triggered by the first child events) would create more. The pod count a
// watch observes (the test's own, direct watch) never exceeds spec.replicas.
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
let url: string;
let proxy: LaggingProxy;

beforeAll(async () => {
  suite = await laggingPodSetSuite('router-expectations', 1000);
  ({ h, ns, pods, proxy } = suite);
  url = (await h.serve('podset')).url;
});
afterAll(async () => {
  await suite?.close();
});

describe('expectations', () => {
  it('never lets a watch see more pods than spec.replicas while a PodSet scales 1 -> 10 -> 1 -> 10', async () => {
    const router = await h.router([podSetLoop(ns, url)], { kubeConfig: proxy.kubeConfig });
    await router.waitForLoop('podset');
    const path = `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`;
    const ps = await h.client.request<{ metadata: { uid: string } }>({ method: 'POST', path, body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'burst' }, spec: { replicas: 1 } } });
    const uid = ps.metadata.uid;
    const live = () => pods.store.list().filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === uid)).length;
    let maxSeen = 0;
    const track = () => (maxSeen = Math.max(maxSeen, live()));
    const offs = [pods.on('add', track), pods.on('update', track)];
    const scale = async (replicas: number) => {
      await h.client.request({ method: 'PATCH', path: `${path}/burst`, contentType: 'application/merge-patch+json', body: { spec: { replicas } } });
      await eventually(`${replicas} live pods`, async () => live() === replicas, 60_000);
    };
    try {
      await eventually('1 live pod', async () => live() === 1, 30_000);
      await scale(10);
      await scale(1);
      await scale(10);
      // Settle past the lag: nothing more gets created once converged.
      await new Promise((r) => setTimeout(r, 2500));
      expect(live()).toBe(10);
      expect(maxSeen).toBe(10);
    } finally {
      offs.forEach((off) => off());
    }
  }, 180_000);
});
