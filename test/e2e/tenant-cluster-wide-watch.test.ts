// Issue 37's lever, on the real control plane: a router started with --cluster-wide-watch=configmaps,serviceaccounts
// and the chart's router ClusterRole rendered with router.clusterWideWatches=[configmaps] (so it may read ConfigMaps
// in every namespace, ServiceAccounts and Secrets only where a tenant grants it). Two tenants, each a user holding
// only `admin` in their namespace, run a namespaced Loop on ConfigMaps owning Secrets and relating ServiceAccounts:
// the router opens one ConfigMap informer for both, one Secret informer per namespace (not opted in) and one
// ServiceAccount informer per namespace (opted in but not granted: it falls back, saying why), and each tenant's
// function is sent only its own namespace's objects, never one of the other tenant's or of a namespace with no Loop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Loop, LoopCondition } from '../../api/loop.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, respond } from '../../lib/sdk/index.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { renderChart } from './chart-render.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { chartRouterIdentity, installTenantRoles } from './tenant-kit.ts';
import { namespaceAdmin, refusalOf } from './tenant-admin.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const LOOPS = '/apis/kubeloop.dev/v1alpha1';

let h: RouterHarness;
let router: Router;
let served: ServedFunction;
let teamA: string;
let teamB: string;
let outsider: string;
const admins = new Map<string, KubeClient>();
const tenantRoles: string[] = [];
const requests: ReconcileRequest[] = [];
const routerUser = () => `kubeloop-router-${teamA}`;

async function metric(name: string, labels: string): Promise<number | undefined> {
  const text = await router.metrics.registry.getSingleMetricAsString(name);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** A tenant as docs/tenants.md has them: a ServiceAccount reading ConfigMaps and Secrets, and the router's grant. */
async function setUpTenant(ns: string): Promise<KubeClient> {
  const admin = await namespaceAdmin(h.client, ns, `admin-${ns}`);
  await eventually(`admin of ${ns} may create ServiceAccounts`, async () => (await refusalOf(admin, `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'reader' } })) === undefined);
  await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: 'reader' } } });
  const role = async (name: string, rules: unknown[], subject: Record<string, string>) => {
    await admin.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/roles`, body: { metadata: { name }, rules } });
    await admin.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/rolebindings`, body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [subject] } });
  };
  await role('reader', [{ apiGroups: [''], resources: ['configmaps', 'secrets', 'serviceaccounts'], verbs: ['get', 'list', 'watch'] }], { kind: 'ServiceAccount', name: 'reader', namespace: ns });
  // The router's grant, as without --cluster-wide-watch: ConfigMaps too, which it reads by its ClusterRole while it
  // may (the grant is what its Loops fall back on when the ClusterRole loses the rule).
  await role('kubeloop-router', [
    { apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['reader'], verbs: ['impersonate'] },
    { apiGroups: [''], resources: ['configmaps', 'secrets', 'serviceaccounts'], verbs: ['get', 'list', 'watch'] },
  ], { kind: 'User', name: routerUser(), apiGroup: 'rbac.authorization.k8s.io' });
  return admin;
}

async function running(ns: string): Promise<LoopCondition> {
  return eventually(`Loop ${ns}/copier Running`, async () => {
    const loop = await h.client.request<Loop>({ path: `${LOOPS}/namespaces/${ns}/loops/copier` });
    const condition = loop.status?.conditions?.find((c) => c.type === 'Ready');
    return condition?.reason === 'Running' && condition;
  }, 90_000);
}

const primary = (ns: string, name: string, data: Record<string, string> = {}) => ({ metadata: { name, namespace: ns, labels: { role: 'primary' } }, data });
const requestsOf = (ns: string) => requests.filter((r) => r.loopNamespace === ns);
/** Every object a tenant's function was sent: primaries and related objects. */
const sentTo = (ns: string) => requestsOf(ns).flatMap((r) => [r.object, ...Object.values(r.related ?? {}).flat()]);

beforeAll(async () => {
  h = await routerHarness('tenant-cluster-wide-watch');
  teamA = h.suite.namespace;
  teamB = `${teamA}-b`;
  outsider = `${teamA}-x`;
  for (const ns of [teamB, outsider]) await h.client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml']);
  const { manifests } = await renderChart(h.suite.binaries.helm, { namespace: teamA, values: { router: { clusterWideWatches: ['configmaps'] } } });
  tenantRoles.push(...(await installTenantRoles(h.client, manifests, teamA)));
  const routerKubeConfig = await chartRouterIdentity(h.client, manifests, routerUser(), h.suite.server);
  for (const ns of [teamA, teamB]) admins.set(ns, await setUpTenant(ns));
  served = await serveFunction(defineFunction({ name: 'cluster-wide-echo', reconcile: (request: ReconcileRequest) => (requests.push(request), respond([])) }), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  // Watches end within 5-10 s and reviews come every 5 s, so a ClusterRole that loses (and regains) a rule shows soon.
  router = await h.router(undefined, {
    kubeConfig: routerKubeConfig,
    loopSelector: h.loopSelector,
    clusterWideWatches: [{ resource: 'configmaps', group: '' }, { resource: 'serviceaccounts', group: '' }],
    watchTimeoutSeconds: 5,
    bookmarkedWatchTimeoutSeconds: 5,
    accessReviewIntervalMs: 5_000,
  });
  for (const [ns, admin] of admins) {
    const body = {
      apiVersion: 'kubeloop.dev/v1alpha1',
      kind: 'Loop',
      metadata: { name: 'copier', labels: h.loopSelector.matchLabels },
      spec: {
        for: { apiVersion: 'v1', kind: 'ConfigMap' },
        owns: [{ apiVersion: 'v1', kind: 'Secret' }],
        selector: { matchLabels: { role: 'primary' } },
        // A deleted primary's last state is sent: a delete event routed to the wrong Loop would show there.
        sendDeletes: true,
        // Read from the same cluster-wide cache by label: the view must answer for the Loop's namespace only.
        related: [
          { name: 'all', apiVersion: 'v1', kind: 'ConfigMap', selector: { matchLabels: { role: 'primary' } } },
          { name: 'accounts', apiVersion: 'v1', kind: 'ServiceAccount' },
        ],
        serviceAccount: { name: 'reader' },
        function: { url: served.url },
      },
    };
    // The aggregation controller gives admin the Loop kind shortly after the tenant role appears.
    await eventually(`admin of ${ns} may create Loops`, async () => (await refusalOf(admin, `${LOOPS}/namespaces/${ns}/loops`, body)) === undefined);
    await admin.request({ method: 'POST', path: `${LOOPS}/namespaces/${ns}/loops`, body });
  }
}, 240_000);

afterAll(async () => {
  await served?.close();
  for (const ns of [teamA, teamB]) await h?.client.request({ method: 'DELETE', path: `${LOOPS}/namespaces/${ns}/loops` }).catch(() => {});
  for (const path of [`${RBAC}/clusterrolebindings/${routerUser()}`, `${RBAC}/clusterroles/${routerUser()}`, ...tenantRoles.map((name) => `${RBAC}/clusterroles/${name}`)]) {
    await h?.client.request({ method: 'DELETE', path }).catch(() => {});
  }
  for (const ns of [teamB, outsider]) await h?.client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }).catch(() => {});
  await h?.close();
});

describe('--cluster-wide-watch with two tenants, each holding only admin in its namespace', () => {
  it('opens one ConfigMap watch for both Loops, and one per namespace of a kind not opted in or not granted cluster-wide', async () => {
    await running(teamA);
    await running(teamB);
    expect(await metric('kubeloop_router_cluster_wide_watches', 'resource="configmaps",state="cluster-wide"')).toBe(1);
    expect(await metric('kubeloop_router_cluster_wide_watches', 'resource="serviceaccounts",state="per-namespace"')).toBe(1);
    expect(await metric('kubeloop_router_cluster_wide_watches', 'resource="secrets"')).toBeUndefined();
    // Per namespace, the two Loops would hold two ConfigMap informers (and at 1,000 tenants, 1,000).
    expect(await metric('kubeloop_router_informers', 'resource="ConfigMap.v1"')).toBe(1);
    expect(await metric('kubeloop_router_informers', 'resource="Secret.v1"')).toBe(2);
    expect(await metric('kubeloop_router_informers', 'resource="ServiceAccount.v1')).toBe(2);
    // The two Secret informers share the resource label: the gauge is their caches' sum, not the last one to change.
    for (const [ns, count] of [[teamA, 1], [teamB, 2]] as const) {
      for (let i = 0; i < count; i++) await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/secrets`, body: { metadata: { name: `extra-${i}` }, stringData: { note: 'counted' } } });
    }
    const secretsIn = async (ns: string) => (await h.client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${ns}/secrets` })).items.length;
    const both = (await secretsIn(teamA)) + (await secretsIn(teamB));
    await eventually(`kubeloop_router_watched_objects{resource="Secret.v1"} at ${both}`, async () => (await metric('kubeloop_router_watched_objects', 'resource="Secret.v1"')) === both);
  }, 120_000);

  it("sends each tenant's function only its own namespace's ConfigMaps, never another tenant's or one of a namespace without a Loop", async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${outsider}/configmaps`, body: primary(outsider, 'outsider-secret', { token: 'x' }) });
    await admins.get(teamB)!.request({ method: 'POST', path: `/api/v1/namespaces/${teamB}/configmaps`, body: primary(teamB, 'b-settings', { token: 'b' }) });
    await admins.get(teamA)!.request({ method: 'POST', path: `/api/v1/namespaces/${teamA}/configmaps`, body: primary(teamA, 'a-settings') });
    await eventually('team-b reconciled b-settings', async () => requestsOf(teamB).some((r) => r.object.metadata?.name === 'b-settings'));
    await h.client.request({ method: 'DELETE', path: `/api/v1/namespaces/${outsider}/configmaps/outsider-secret` });
    await admins.get(teamB)!.request({ method: 'DELETE', path: `/api/v1/namespaces/${teamB}/configmaps/b-settings` });
    await eventually('team-b was sent the deletion of b-settings', async () => requestsOf(teamB).some((r) => r.object.metadata?.name === 'b-settings' && r.trigger?.type === 'DELETED'));
    // One watch delivers in resourceVersion order: once a later change reached team-a's Loop, the earlier
    // events of the other namespaces had been routed (or not) before it.
    await admins.get(teamA)!.request({ method: 'PATCH', path: `/api/v1/namespaces/${teamA}/configmaps/a-settings`, contentType: 'application/merge-patch+json', body: { data: { marker: 'last' } } });
    await eventually('team-a reconciled the last change', async () => requestsOf(teamA).some((r) => (r.object as { data?: Record<string, string> }).data?.marker === 'last'));
    const last = requestsOf(teamA).find((r) => (r.object as { data?: Record<string, string> }).data?.marker === 'last')!;
    expect(last.related?.all?.map((o) => o.metadata?.name)).toEqual(['a-settings']);
    expect(new Set(last.related?.accounts?.map((o) => o.metadata?.namespace))).toEqual(new Set([teamA]));
    // The Loop's view of the shared cache holds its namespace's ConfigMaps, not the cluster's.
    const inA = await h.client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${teamA}/configmaps` });
    expect((await router.waitForLoop(`${teamA}/copier`)).stats().cachedPrimaries).toBe(inA.items.length);
    for (const [ns, other] of [[teamA, teamB], [teamB, teamA]] as const) {
      const namespaces = new Set(sentTo(ns).map((o) => o.metadata?.namespace));
      expect(namespaces, `objects sent to ${ns}'s function`).toEqual(new Set([ns]));
      expect(sentTo(ns).map((o) => o.metadata?.name)).not.toContain('outsider-secret');
      expect(sentTo(ns).map((o) => o.metadata?.name)).not.toContain(other === teamB ? 'b-settings' : 'a-settings');
    }
    // The shared cache is still charged to each tenant by the objects' namespaces.
    expect(await metric('kubeloop_router_cached_bytes', `tenant="${teamA}"`)).toBeGreaterThan(0);
    expect(await metric('kubeloop_router_cached_bytes', `tenant="${teamB}"`)).toBeGreaterThan(0);
  }, 120_000);

  it('falls back to per-namespace watches when the ClusterRole loses the rule, keeps every Loop working, and returns once it is back', async () => {
    const clusterRole = `${RBAC}/clusterroles/${routerUser()}`;
    type Rule = { apiGroups?: string[]; resources?: string[] };
    const role = await h.client.request<{ metadata: Record<string, unknown>; rules: Rule[] }>({ path: clusterRole });
    const configMapRule = (r: Rule) => r.resources?.length === 1 && r.resources[0] === 'configmaps';
    expect(role.rules.some(configMapRule)).toBe(true);
    // An operator takes the kind out of the router's ClusterRole (not of --cluster-wide-watch).
    await h.client.request({ method: 'PUT', path: clusterRole, body: { ...role, rules: role.rules.filter((r) => !configMapRule(r)) } });
    await eventually('configmaps watched per namespace', async () => (await metric('kubeloop_router_cluster_wide_watches', 'resource="configmaps",state="per-namespace"')) === 1, 90_000);
    await eventually('one ConfigMap informer per tenant', async () => (await metric('kubeloop_router_informers', 'resource="ConfigMap.v1"')) === 2, 90_000);
    for (const ns of [teamA, teamB]) await running(ns);
    // The tenants' Loops keep working on their namespaces' watches.
    await admins.get(teamA)!.request({ method: 'POST', path: `/api/v1/namespaces/${teamA}/configmaps`, body: primary(teamA, 'after-loss') });
    await eventually('team-a reconciled after-loss', async () => requestsOf(teamA).some((r) => r.object.metadata?.name === 'after-loss'), 90_000);
    // The rule comes back: the next review moves the kind to one watch again.
    const current = await h.client.request<{ metadata: Record<string, unknown>; rules: Rule[] }>({ path: clusterRole });
    await h.client.request({ method: 'PUT', path: clusterRole, body: { ...current, rules: role.rules } });
    await eventually('configmaps watched cluster-wide again', async () => (await metric('kubeloop_router_cluster_wide_watches', 'resource="configmaps",state="cluster-wide"')) === 1, 90_000);
    await eventually('one ConfigMap informer again', async () => (await metric('kubeloop_router_informers', 'resource="ConfigMap.v1"')) === 1, 90_000);
    await admins.get(teamB)!.request({ method: 'POST', path: `/api/v1/namespaces/${teamB}/configmaps`, body: primary(teamB, 'after-return') });
    await eventually('team-b reconciled after-return', async () => requestsOf(teamB).some((r) => r.object.metadata?.name === 'after-return'), 90_000);
    for (const ns of [teamA, teamB]) await running(ns);
    expect(new Set(sentTo(teamB).map((o) => o.metadata?.namespace))).toEqual(new Set([teamB]));
  }, 300_000);
});
