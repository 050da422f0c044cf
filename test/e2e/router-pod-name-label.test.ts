// Seeds 000/002 as their reader would try them: pods of a Deployment (generateName) annotated later get
// the pod-name label, and lose it when the annotation is removed. Router and function talk over HTTP.
import type { V1Pod, V1PodList } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { inlineLoop, routerHarness, watchPods, type RouterHarness } from '../support/router-harness.ts';
import type { Router } from '../../router/start-router.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';

let h: RouterHarness;
let router: Router;
let ns: string;

beforeAll(async () => {
  h = await routerHarness('router-pod-name-label');
  ns = h.suite.namespace;
  const fn = await h.serve('pod-name-label');
  router = await h.router([inlineLoop('pod-name-label', ns, { for: { apiVersion: 'v1', kind: 'Pod' }, metadataOnly: true, function: { url: fn.url } })]);
  await router.waitForLoop('pod-name-label');
});
afterAll(async () => h?.close());

async function pods(selector: string): Promise<V1Pod[]> {
  const list = await h.client.request<V1PodList>({ path: `/api/v1/namespaces/${ns}/pods`, query: { labelSelector: selector } });
  return list.items;
}

async function annotate(name: string, value: string | null): Promise<void> {
  await h.client.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns}/pods/${name}`,
    contentType: 'application/merge-patch+json',
    body: { metadata: { annotations: { [ANNOTATION]: value } } },
  });
}

describe('pod-name-label through the router', () => {
  it('labels annotated Deployment pods with their generated names and removes the label with the annotation', async () => {
    await h.client.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
        },
      },
    });
    const created = await eventually('3 pods of the Deployment', async () => {
      const list = await pods('app=web');
      return list.length === 3 && list;
    });
    // Not annotated yet: no label.
    for (const pod of created) expect(pod.metadata?.labels?.[LABEL]).toBeUndefined();

    const [first, second] = created.map((p) => p.metadata?.name ?? '');
    await annotate(first!, 'true');
    await annotate(second!, 'true');
    await eventually('both annotated pods labelled with their names', async () => {
      const list = await pods('app=web');
      const labelled = list.filter((p) => p.metadata?.labels?.[LABEL] === p.metadata?.name).map((p) => p.metadata?.name);
      return labelled.length === 2 && labelled;
    });
    // The third pod was never annotated and stays unlabelled.
    const third = (await pods('app=web')).find((p) => p.metadata?.name !== first && p.metadata?.name !== second);
    expect(third?.metadata?.labels?.[LABEL]).toBeUndefined();

    await annotate(first!, null);
    await eventually('label removed with the annotation', async () => {
      const pod = (await pods('app=web')).find((p) => p.metadata?.name === first);
      return pod !== undefined && pod.metadata?.labels?.[LABEL] === undefined;
    });
    const stillLabelled = (await pods('app=web')).find((p) => p.metadata?.name === second);
    expect(stillLabelled?.metadata?.labels?.[LABEL]).toBe(second);
  });

  it('labels a pod created with the annotation already set', async () => {
    await h.client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: { metadata: { generateName: 'born-', annotations: { [ANNOTATION]: 'true' }, labels: { born: 'yes' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    const pod = await eventually('labelled at birth', async () => {
      const [p] = await pods('born=yes');
      return p?.metadata?.labels?.[LABEL] === p?.metadata?.name && p;
    });
    expect(pod.metadata?.name).toMatch(/^born-/);
    // Every patch the router sent was applied once: metrics show no refusals and no errors.
    const metrics = await router.metrics.registry.getMetricsAsJSON();
    const actions = metrics.find((m) => m.name === 'kubeloop_router_actions_total')?.values ?? [];
    expect(actions.filter((v) => v.labels.result === 'error' || v.labels.result === 'refused')).toEqual([]);
    // controller-runtime's and client-go's names: the Loop's queue and reconciles, and the API requests (the patch among them).
    const sum = (name: string, match: (labels: Partial<Record<string, string | number>>) => boolean = () => true) =>
      (metrics.find((m) => m.name === name)?.values ?? []).filter((v) => match(v.labels)).reduce((total, v) => total + v.value, 0);
    expect(sum('workqueue_adds_total', (l) => l.name === 'pod-name-label')).toBeGreaterThan(0);
    expect(sum('controller_runtime_reconcile_total', (l) => l.controller === 'pod-name-label' && l.result === 'success')).toBeGreaterThan(0);
    expect(sum('rest_client_requests_total', (l) => l.method === 'PATCH' && l.code === '200')).toBeGreaterThan(0);
    expect(sum('rest_client_requests_total', (l) => l.method === 'GET' && l.code === '200')).toBeGreaterThan(0);
  });

  it("records the watch event of its own label write in the pod's history as seen, after the patch that caused it", async () => {
    // The event may be settled at intake (router/intake/own-write-intake.ts) or by a reconcile: `kubeloop why`
    // shows the same entry either way.
    const name = 'history-of-own-write';
    await h.client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: { metadata: { name, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    const loopId = router.loops().find((r) => r.loop.name === 'pod-name-label')!.loop.id;
    const entries = await eventually('the own write seen in the history', async () => {
      const history = router.history.history(loopId, `${ns}/${name}`);
      return history.some((e) => e.outcome === 'own-write-seen') && history;
    });
    // The entry before it is the reconcile whose patch produced it (a call, or a kept answer replayed after a conflict).
    const seen = entries.findIndex((e) => e.outcome === 'own-write-seen');
    expect(entries[seen - 1]).toMatchObject({ outcome: 'ok', writes: [{ action: `patch v1/Pod ${ns}/${name}`, result: 'applied' }] });
    expect(entries.filter((e) => e.requestDigest !== undefined).length).toBeGreaterThan(0);
    expect(entries[seen]).toMatchObject({ actions: [], writes: [] });
    expect(entries[seen]!.triggers.at(-1)).toMatchObject({ source: 'primary', type: 'MODIFIED', kind: 'v1/Pod', object: `${ns}/${name}` });
  });

  it('re-labels a pod whose label another writer removes or changes right after the router wrote it', async () => {
    // The router skips the call for the event its own patch caused (router/reconcile/own-writes.ts); a change by
    // anyone else, even within milliseconds of that write, must still be reconciled.
    const skipsBefore = await counter('kubeloop_router_own_write_skips_total');
    const watched = await watchPods(h.client, ns);
    try {
      for (const [i, change] of ([null, 'someone-else'] as const).entries()) {
        const name = `raced-${i}`;
        const path = `/api/v1/namespaces/${ns}/pods/${name}`;
        // React to the watch event of the router's label write at once: as close behind it as a client gets.
        let changed: Promise<unknown> | undefined;
        const off = watched.on('update', (pod) => {
          if (pod.metadata?.name !== name || changed || pod.metadata?.labels?.[LABEL] !== name) return;
          changed = h.client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { metadata: { labels: { [LABEL]: change } } } });
        });
        await h.client.request({
          method: 'POST',
          path: `/api/v1/namespaces/${ns}/pods`,
          body: { metadata: { name, annotations: { [ANNOTATION]: 'true' }, labels: { raced: 'yes' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        });
        await eventually('the router labels the pod and the other writer answers', async () => changed);
        off();
        await eventually(`label restored after it was ${change === null ? 'removed' : 'changed'}`, async () => {
          const pod = await h.client.request<V1Pod>({ path });
          return pod.metadata?.labels?.[LABEL] === name;
        });
      }
    } finally {
      await watched.stop();
    }
    // And the follow-up events of the router's own writes did skip their calls.
    expect(await counter('kubeloop_router_own_write_skips_total')).toBeGreaterThan(skipsBefore);
  });
});

async function counter(name: string): Promise<number> {
  const metric = (await router.metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}
