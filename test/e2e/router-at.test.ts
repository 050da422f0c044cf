// Seed 004 (cnat) as its reader would try it: an At scheduled 5 s ahead creates its pod when the time
// comes and ends DONE when kwok completes the pod; an At in the past runs at once.
import type { V1Pod, V1PodList } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';

interface At {
  metadata: { name: string; uid?: string };
  status?: { phase?: string; outcome?: string };
}

let h: RouterHarness;
let ns: string;
const ats = () => `/apis/cnat.kubeloop.dev/v1alpha1/namespaces/${ns}/ats`;

beforeAll(async () => {
  h = await routerHarness('router-at');
  ns = h.suite.namespace;
  await installCrds(h.client, ['ats.cnat.kubeloop.dev.yaml']);
  const fn = await h.serve('at');
  const router = await h.router([
    inlineLoop('at', ns, { for: { apiVersion: 'cnat.kubeloop.dev/v1alpha1', kind: 'At' }, owns: [{ apiVersion: 'v1', kind: 'Pod' }], function: { url: fn.url } }),
  ]);
  await router.waitForLoop('at');
});
afterAll(async () => h?.close());

async function podsOf(uid: string): Promise<V1Pod[]> {
  const list = await h.client.request<V1PodList>({ path: `/api/v1/namespaces/${ns}/pods` });
  return list.items.filter((p) => p.metadata?.ownerReferences?.some((r) => r.controller && r.uid === uid));
}

async function createAt(name: string, schedule: Date): Promise<At> {
  return h.client.request<At>({
    method: 'POST',
    path: ats(),
    body: { apiVersion: 'cnat.kubeloop.dev/v1alpha1', kind: 'At', metadata: { name }, spec: { schedule: schedule.toISOString().replace(/\.\d{3}Z$/, 'Z'), command: 'echo hello' } },
  });
}

describe('At through the router', () => {
  it('waits for its schedule 5 s ahead, then runs its pod and ends DONE when the pod completes', async () => {
    const schedule = new Date(Date.now() + 5000);
    const at = await createAt('later', schedule);
    const uid = at.metadata.uid ?? '';
    const pending = await eventually('At PENDING', async () => {
      const live = await h.client.request<At>({ path: `${ats()}/later` });
      return live.status?.phase === 'PENDING' && live;
    });
    expect(pending.status?.phase).toBe('PENDING');
    expect(await podsOf(uid)).toEqual([]);

    const [pod] = await eventually('pod created at the schedule', async () => {
      const list = await podsOf(uid);
      return list.length > 0 && list;
    }, 30_000);
    // Not before the schedule (second precision: the schedule is truncated to whole seconds).
    const created = new Date(String(pod?.metadata?.creationTimestamp)).getTime();
    expect(created).toBeGreaterThanOrEqual(Math.floor(schedule.getTime() / 1000) * 1000);

    const done = await eventually('At DONE', async () => {
      const live = await h.client.request<At>({ path: `${ats()}/later` });
      return live.status?.phase === 'DONE' && live;
    }, 60_000);
    expect(done.status?.outcome).toBe('Succeeded');
    expect(await podsOf(uid)).toHaveLength(1);
  });

  it('runs at once when the schedule is in the past', async () => {
    const at = await createAt('past', new Date(Date.now() - 3600_000));
    await eventually('pod created at once', async () => (await podsOf(at.metadata.uid ?? '')).length === 1, 15_000);
    await eventually('At DONE', async () => (await h.client.request<At>({ path: `${ats()}/past` })).status?.phase === 'DONE', 60_000);
  });
});
