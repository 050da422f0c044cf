// Seed 001 as its reader would try it: a PodSet scales 3 -> 5 -> 1 with a status that matches its pods,
// its pod count never exceeds spec.replicas while scaling up (as a watch sees it), and its pods are
// garbage-collected when it is deleted.
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Informer } from '../../lib/kube/informer.ts';
import { eventually } from '../cluster/eventually.ts';
import { installCrds, podSetLoop, routerHarness, watchPods, type RouterHarness } from '../support/router-harness.ts';

interface PodSet {
  metadata: { name: string; uid?: string; generation?: number };
  spec: { replicas: number };
  status?: { availableReplicas?: number; podNames?: string[]; observedGeneration?: number };
}

let h: RouterHarness;
let ns: string;
let pods: Informer<V1Pod>;
const path = () => `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`;

beforeAll(async () => {
  h = await routerHarness('router-podset');
  ns = h.suite.namespace;
  await installCrds(h.client, ['podsets.app.kubeloop.dev.yaml']);
  const fn = await h.serve('podset');
  const router = await h.router([podSetLoop(ns, fn.url)]);
  await router.waitForLoop('podset');
  pods = await watchPods(h.client, ns);
});
afterAll(async () => {
  await pods?.stop();
  await h?.close();
});

const live = (owner: string) =>
  pods.store.list().filter((p) => !p.metadata?.deletionTimestamp && p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === owner));

async function converged(name: string, replicas: number): Promise<PodSet> {
  return eventually(`PodSet ${name} at ${replicas} pods with matching status`, async () => {
    const ps = await h.client.request<PodSet>({ path: `${path()}/${name}` });
    const names = live(ps.metadata.uid ?? '').map((p) => p.metadata?.name).sort();
    const status = ps.status;
    return (
      names.length === replicas &&
      status?.availableReplicas === replicas &&
      JSON.stringify(status.podNames) === JSON.stringify(names) &&
      status.observedGeneration === ps.metadata.generation &&
      ps
    );
  }, 60_000);
}

describe('PodSet through the router', () => {
  it('scales 3 -> 5 -> 1 with a matching status, never above spec.replicas while scaling up, and is garbage-collected', async () => {
    const created = await h.client.request<PodSet>({ method: 'POST', path: path(), body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'web' }, spec: { replicas: 3 } } });
    const uid = created.metadata.uid ?? '';
    // Every pod count a watch observes, from here on.
    let maxSeen = 0;
    const track = () => (maxSeen = Math.max(maxSeen, live(uid).length));
    const offAdd = pods.on('add', track);
    const offUpdate = pods.on('update', track);
    try {
      await converged('web', 3);
      expect(maxSeen).toBe(3);

      await h.client.request({ method: 'PATCH', path: `${path()}/web`, contentType: 'application/merge-patch+json', body: { spec: { replicas: 5 } } });
      await converged('web', 5);
      expect(maxSeen).toBe(5);

      await h.client.request({ method: 'PATCH', path: `${path()}/web`, contentType: 'application/merge-patch+json', body: { spec: { replicas: 1 } } });
      await converged('web', 1);
    } finally {
      offAdd();
      offUpdate();
    }

    await h.client.request({ method: 'DELETE', path: `${path()}/web`, body: { propagationPolicy: 'Background' } });
    await eventually('pods garbage-collected', async () => pods.store.list().filter((p) => p.metadata?.ownerReferences?.some((r) => r.uid === uid)).length === 0, 60_000);
  });
});
