// Least privilege from the router's side: a router whose identity may read Loops but not the kind a Loop
// names reports the Loop Ready=False with reason Forbidden instead of failing silently or crashing (and one
// that may not watch RBAC falls back to the periodic review, metric 0).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../cluster/eventually.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { certificateKubeConfig } from './tenant-kit.ts';

let h: RouterHarness;
let ns: string;
const user = () => `kubeloop-router-limited-${ns}`;

beforeAll(async () => {
  h = await routerHarness('router-forbidden');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml']);
  // May read Loops and write their status: nothing else.
  await h.client.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    body: {
      metadata: { name: user() },
      rules: [
        // ClusterLoops only, as a router whose RBAC predates the namespaced Loop: it still starts and serves them.
        { apiGroups: ['kubeloop.dev'], resources: ['clusterloops'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['kubeloop.dev'], resources: ['clusterloops/status'], verbs: ['patch', 'update'] },
        // What a router needs to act as the Loop's ServiceAccount, which may read Secrets here.
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
        { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
      ],
    },
  });
  await h.client.request({
    method: 'POST',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
    body: { metadata: { name: user() }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user() }, subjects: [{ kind: 'User', name: user(), apiGroup: 'rbac.authorization.k8s.io' }] },
  });
});
afterAll(async () => {
  for (const kind of ['clusterrolebindings', 'clusterroles']) {
    await h.client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/${kind}/${user()}` }).catch(() => {});
  }
  await h.client.request({ method: 'DELETE', path: `/apis/kubeloop.dev/v1alpha1/clusterloops/secrets-${ns}` }).catch(() => {});
  await h?.close();
});

describe('a router without the rights its Loop needs', () => {
  it('sets Ready=False with reason Forbidden on the Loop', async () => {
    const limited = await certificateKubeConfig(h.suite.server, user());
    const router = await h.router(undefined, { kubeConfig: limited, loopSelector: { matchLabels: { 'kubeloop.dev/e2e': ns } } });

    const name = `secrets-${ns}`;
    await h.client.request({
      method: 'POST',
      path: '/apis/kubeloop.dev/v1alpha1/clusterloops',
      body: {
        apiVersion: 'kubeloop.dev/v1alpha1',
        kind: 'ClusterLoop',
        metadata: { name, labels: { 'kubeloop.dev/e2e': ns } },
        spec: { for: { apiVersion: 'v1', kind: 'Secret' }, namespaces: [ns], serviceAccount: h.loopServiceAccount, function: { url: 'http://127.0.0.1:1/' } },
      },
    });
    const ready = await eventually('Ready False Forbidden', async () => {
      const loop = await h.client.request<{ status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } }>({
        path: `/apis/kubeloop.dev/v1alpha1/clusterloops/${name}`,
      });
      const condition = loop.status?.conditions?.find((c) => c.type === 'Ready');
      return condition?.reason === 'Forbidden' && condition;
    }, 30_000);
    expect(ready.status).toBe('False');
    expect(ready.message).toContain('secrets');
    // Nor may it watch RBAC: it runs on, its reviews on the short timer only, and says so in a metric.
    expect((await router.metrics.rbacWatch.get()).values[0]?.value).toBe(0);
  });
});
