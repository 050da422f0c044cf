// Least privilege from the router's side: a router whose identity may read Loops but not the kind a Loop
// names reports the Loop Ready=False with reason Forbidden instead of failing silently or crashing (and one
// that may not watch RBAC falls back to the periodic review, metric 0; one that loses that read and gets it
// back returns to reviews within seconds of a change, metric 1 again).
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
    for (const name of [user(), `${user()}-rbac-read`]) await h.client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/${kind}/${name}` }).catch(() => {});
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

describe('a router that loses the right to watch RBAC and gets it back', () => {
  it('says so (metric 0, reviews on the short timer) and returns to watching (metric 1) once the read is given back', async () => {
    const rbacRead = `${user()}-rbac-read`;
    const RBAC = '/apis/rbac.authorization.k8s.io/v1';
    await h.client.request({
      method: 'POST',
      path: `${RBAC}/clusterroles`,
      body: { metadata: { name: rbacRead }, rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'], verbs: ['list', 'watch'] }] },
    });
    const binding = { metadata: { name: rbacRead }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: rbacRead }, subjects: [{ kind: 'User', name: user(), apiGroup: 'rbac.authorization.k8s.io' }] };
    await h.client.request({ method: 'POST', path: `${RBAC}/clusterrolebindings`, body: binding });
    const limited = await certificateKubeConfig(h.suite.server, user());
    // Watches renewed every 2-4 s, bookmarks heard or not: an open watch is not cut when RBAC changes, its renewal is refused.
    const router = await h.router(undefined, { kubeConfig: limited, loopSelector: { matchLabels: { 'kubeloop.dev/e2e': `${ns}-none` } }, watchTimeoutSeconds: 2, bookmarkedWatchTimeoutSeconds: 2 });
    const gauge = async () => (await router.metrics.rbacWatch.get()).values[0]?.value;
    await eventually('watching RBAC', async () => (await gauge()) === 1, 30_000);
    await h.client.request({ method: 'DELETE', path: `${RBAC}/clusterrolebindings/${rbacRead}` });
    await eventually('the watch refused', async () => (await gauge()) === 0, 60_000);
    await h.client.request({ method: 'POST', path: `${RBAC}/clusterrolebindings`, body: binding });
    await eventually('watching RBAC again', async () => (await gauge()) === 1, 60_000);
  });
});
