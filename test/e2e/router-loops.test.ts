// The Loop controller against Loop objects: a Loop created, edited and deleted starts, changes and stops
// its watches without a restart, and its status carries a Ready condition with a reason.
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';

let h: RouterHarness;
let ns: string;
let router: Router;
let url: string;
const loopsPath = '/apis/kubeloop.dev/v1alpha1/clusterloops';

beforeAll(async () => {
  h = await routerHarness('router-loops');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml']);
  url = (await h.serve('pod-name-label')).url;
  // Only this suite's Loops: other suites may apply samples/loops to the shared control plane.
  router = await h.router(undefined, { loopSelector: h.loopSelector });
});
afterAll(async () => {
  await h?.close();
});

async function pod(name: string, labels: Record<string, string> = {}): Promise<void> {
  await h.client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    body: { metadata: { name, labels, annotations: { [ANNOTATION]: 'true' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  });
}
const labelOf = async (name: string) => (await h.client.request<V1Pod>({ path: `/api/v1/namespaces/${ns}/pods/${name}` })).metadata?.labels?.[LABEL];

const ready = (name: string) => h.loopStatus(name);

describe('Loop objects drive the router', () => {
  it('starts a Loop when it is created, applies edits and stops it when deleted, reporting Ready', async () => {
    const name = `pnl-${ns}`;
    await h.createLoop(name, { for: { apiVersion: 'v1', kind: 'Pod' }, namespaces: [ns], metadataOnly: true, serviceAccount: h.loopServiceAccount, function: { url } });
    const first = await eventually('Ready True', async () => {
      const r = await ready(name);
      return r.ready?.status === 'True' && r;
    });
    expect(first.ready?.reason).toBe('Running');
    expect(first.loop.status?.observedGeneration).toBe(1);
    await pod('a');
    await eventually('pod a labelled', async () => (await labelOf('a')) === 'a');

    // Edit: only pods labelled tier=front from now on.
    await h.client.request({
      method: 'PATCH',
      path: `${loopsPath}/${name}`,
      contentType: 'application/merge-patch+json',
      body: { spec: { selector: { matchLabels: { tier: 'front' } } } },
    });
    await eventually('observedGeneration 2', async () => (await ready(name)).loop.status?.observedGeneration === 2);
    await pod('b');
    await pod('c', { tier: 'front' });
    await eventually('pod c labelled', async () => (await labelOf('c')) === 'c');
    expect(await labelOf('b')).toBeUndefined();

    await h.client.request({ method: 'DELETE', path: `${loopsPath}/${name}` });
    await eventually('Loop stopped', async () => router.loops().every((r) => r.loop.name !== name));
  });

  it('reports InvalidSpec for a Loop over a kind the API server does not serve', async () => {
    const name = `nothing-${ns}`;
    await h.createLoop(name, { for: { apiVersion: 'example.com/v1', kind: 'Nothing' }, serviceAccount: h.loopServiceAccount, function: { url } });
    const r = await eventually('Ready False', async () => {
      const s = await ready(name);
      return s.ready?.status === 'False' && s;
    });
    expect(r.ready?.reason).toBe('InvalidSpec');
    expect(r.ready?.message).toContain('unknown kind Nothing in example.com/v1');
  });

  it('refuses a Loop that names no ServiceAccount, with its own reason and a Warning event', async () => {
    const name = `anonymous-${ns}`;
    await h.createLoop(name, { for: { apiVersion: 'v1', kind: 'Pod' }, namespaces: [ns], function: { url } });
    const r = await eventually('Ready False', async () => {
      const s = await ready(name);
      return s.ready?.status === 'False' && s;
    });
    expect(r.ready?.reason).toBe('ServiceAccountRequired');
    expect(r.ready?.message).toContain('spec.serviceAccount is required');
    // A cluster-scoped object's events live in the default namespace.
    type EventList = { items: Array<{ type?: string; reason?: string; regarding?: { kind?: string; name?: string } }> };
    await eventually('a Warning event on the Loop', async () =>
      (await h.client.request<EventList>({ path: '/apis/events.k8s.io/v1/namespaces/default/events' })).items.some(
        (e) => e.type === 'Warning' && e.reason === 'ServiceAccountRequired' && e.regarding?.kind === 'ClusterLoop' && e.regarding.name === name,
      ),
    );
    expect(router.loops().some((l) => l.loop.name === name)).toBe(false);
  });
});
