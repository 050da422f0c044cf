// What one namespace admin can take from the router that every tenant shares, attacked on the real control
// plane by users bound only to the built-in `admin` role in their own namespace, with one router running under
// the chart's router ClusterRole: team a's event flood does not drown team b's events or the router's warnings
// about them (issue 38 item 10); team a's reconciles do not erase team b's flight-recorder history (12); a
// namespace runs at most N Loops, the oldest first (15); and a deleted Loop with `finalize: true` releases its
// primaries, so its namespace can then be deleted (16). A namespace named `cluster` is a tenant of its own,
// not the ClusterLoops' (14). Team a restarting a Loop in a tight loop is held to its namespace's start rate
// while team b's new Loop starts, and team a's Loop runs its last spec in the end.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE_PRIMARIES_FINALIZER, type Loop, type LoopCondition, type LoopSpec } from '../../api/loop.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, event, respond } from '../../lib/sdk/index.ts';
import type { Router } from '../../router/start-router.ts';
import { CLUSTER_TENANT } from '../../api/tenant.ts';
import { eventually } from '../cluster/eventually.ts';
import { renderChart } from './chart-render.ts';
import { chartRouterIdentity, installTenantRoles } from './tenant-kit.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { namespaceAdmin, refusalOf } from './tenant-admin.ts';

const API = '/apis/kubeloop.dev/v1alpha1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
/** The bounds this router runs with: small, so the test reaches them with a few objects. */
const MAX_LOOPS = 3;
const HISTORY = { perObject: 10, objects: 40, objectsPerTenant: 30 };
/** Loop (re)starts per namespace: small, so a few quick edits pass it. */
const LOOP_STARTS = { qps: 0.5, burst: 3 };

let h: RouterHarness;
let router: Router;
let served: ServedFunction;
/** team-a floods, team-b is the quiet neighbour, team-c is deleted at the end. */
const teams: Record<'a' | 'b' | 'c', { ns: string; admin: KubeClient }> = {} as never;
const tenantRoles: string[] = [];
const routerUser = () => `kubeloop-router-${teams.a.ns}`;
let floods = 0;

const loopsIn = (ns: string) => `${API}/namespaces/${ns}/loops`;
const eventsIn = async (ns: string) =>
  (await h.client.request<{ items: Array<{ reason?: string; note?: string; regarding?: { name?: string } }> }>({ path: `/apis/events.k8s.io/v1/namespaces/${ns}/events` })).items;

/**
 * A ConfigMap's data says what to answer: `flood` -> that many Normal events with fresh messages, again every
 * second; `events` -> that many events; `escape` -> also a write into that namespace (refused: ActionRefused).
 */
const fn = defineFunction({
  name: 'tenant-bounds',
  reconcile: (request: ReconcileRequest) => {
    const data = (request.object as V1ConfigMap & ReconcileRequest['object']).data ?? {};
    const name = request.object.metadata?.name ?? '';
    if (data.flood) {
      floods += 1;
      return respond(Array.from({ length: Number(data.flood) }, (_, i) => event('Normal', 'Flood', `flood ${floods} #${i}`)), { requeueAfterSeconds: 1 });
    }
    const events = Array.from({ length: Number(data.events ?? 0) }, (_, i) => event('Warning', 'Neighbour', `${name} event #${i}`));
    const escape = data.escape ? [{ op: 'apply' as const, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-escaped`, namespace: data.escape }, data: {} } }] : [];
    return respond([...events, ...escape]);
  },
});

/** As the team's admin: the Loop's ServiceAccount and Role, and the router's grant in the namespace (docs/tenants.md). */
async function grantTeam(team: { ns: string; admin: KubeClient }): Promise<void> {
  const { ns, admin } = team;
  // The admin's RoleBinding was just created: the API server's RBAC cache takes a moment to honour it.
  const serviceAccount = { metadata: { name: 'copier' } };
  await eventually(`${ns} admin may create ServiceAccounts`, async () => (await refusalOf(admin, `/api/v1/namespaces/${ns}/serviceaccounts`, serviceAccount)) === undefined);
  await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: serviceAccount });
  await admin.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/roles`, body: { metadata: { name: 'copier' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }] } });
  await admin.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/rolebindings`, body: { metadata: { name: 'copier' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'copier' }, subjects: [{ kind: 'ServiceAccount', name: 'copier', namespace: ns }] } });
  await admin.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/roles`,
    body: { metadata: { name: 'kubeloop-router' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['copier'], verbs: ['impersonate'] }, { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] },
  });
  await admin.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/rolebindings`, body: { metadata: { name: 'kubeloop-router' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kubeloop-router' }, subjects: [{ kind: 'User', name: routerUser(), apiGroup: 'rbac.authorization.k8s.io' }] } });
}

/** A Loop over the team's ConfigMaps labelled `loop: <name>`, created by the team's admin. */
async function createLoop(team: { ns: string; admin: KubeClient }, name: string, spec: Partial<LoopSpec> = {}): Promise<void> {
  const body: Loop = {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'Loop',
    metadata: { name, labels: h.loopSelector.matchLabels },
    spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { loop: name } }, serviceAccount: { name: 'copier' } as LoopSpec['serviceAccount'], function: { url: served.url }, ...spec },
  };
  // The aggregation controller adds the Loop kind to admin shortly after the tenant roles appear.
  await eventually(`${team.ns} admin creates Loop ${name}`, async () => {
    try {
      await team.admin.request({ method: 'POST', path: loopsIn(team.ns), body });
      return true;
    } catch (error) {
      if (isApiError(error, 403)) return false;
      throw error;
    }
  });
}

async function ready(ns: string, name: string, reason: string): Promise<LoopCondition> {
  return eventually(`Loop ${ns}/${name} Ready reason ${reason}`, async () => {
    const loop = await h.client.request<Loop>({ path: `${loopsIn(ns)}/${name}` });
    const condition = loop.status?.conditions?.find((c) => c.type === 'Ready');
    return condition?.reason === reason && condition;
  }, 90_000);
}

/** The lines of kubeloop_router_events_dropped_total with a count above zero. */
const droppedEvents = async () => (await router.metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('kubeloop_router_events_dropped_total{') && !line.endsWith(' 0'));

/** A namespace whose name was the ClusterLoops' tenant key; made for this test and deleted after it. */
const CLUSTER_NAMESPACE = 'cluster';
const clusterLoopName = () => `bounds-${teams.a.ns}`;
/** kubeloop_tenant_calls_started_total by tenant label. */
const callsStarted = async () =>
  new Map(
    (await router.metrics.registry.metrics())
      .split('\n')
      .filter((line) => line.startsWith('kubeloop_tenant_calls_started_total{'))
      .map((line) => [/tenant="([^"]*)"/.exec(line)?.[1] ?? '', Number(line.split(' ').at(-1))]),
  );

const configMap = (team: { ns: string; admin: KubeClient }, name: string, loop: string, data: Record<string, string> = {}) =>
  team.admin.request({ method: 'POST', path: `/api/v1/namespaces/${team.ns}/configmaps`, body: { metadata: { name, labels: { loop } }, data } });

beforeAll(async () => {
  h = await routerHarness('tenant-bounds');
  const base = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml']);
  const { manifests } = await renderChart(h.suite.binaries.helm, { namespace: base });
  tenantRoles.push(...(await installTenantRoles(h.client, manifests, base)));
  const routerKubeConfig = await chartRouterIdentity(h.client, manifests, `kubeloop-router-${base}`, h.suite.server);
  for (const [key, ns] of [['a', base], ['b', `${base}-b`], ['c', `${base}-c`]] as const) {
    if (ns !== base) await h.client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
    teams[key] = { ns, admin: await namespaceAdmin(h.client, ns, `admin-${ns}`) };
    await grantTeam(teams[key]);
  }
  served = await serveFunction(fn, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  router = await h.router(undefined, { kubeConfig: routerKubeConfig, loopSelector: h.loopSelector, maxLoopsPerTenant: MAX_LOOPS, tenantLoopStarts: LOOP_STARTS, history: HISTORY });
}, 180_000);

afterAll(async () => {
  await served?.close();
  await h.client.request({ method: 'DELETE', path: `/api/v1/namespaces/${CLUSTER_NAMESPACE}` }).catch(() => {});
  await h.client.request({ method: 'DELETE', path: `${API}/clusterloops/${clusterLoopName()}` }).catch(() => {});
  for (const team of Object.values(teams)) await h.client.request({ method: 'DELETE', path: loopsIn(team.ns) }).catch(() => {});
  for (const path of [`/api/v1/namespaces/${teams.b?.ns}`, `/api/v1/namespaces/${teams.c?.ns}`, `${RBAC}/clusterrolebindings/${routerUser()}`, `${RBAC}/clusterroles/${routerUser()}`, ...tenantRoles.map((name) => `${RBAC}/clusterroles/${name}`)]) {
    await h.client.request({ method: 'DELETE', path }).catch(() => {});
  }
  await h?.close();
});

describe('a namespace admin flooding events', () => {
  it("drowns neither team b's events nor the router's warning about team b's refused write", async () => {
    await createLoop(teams.a, 'flooder');
    await createLoop(teams.b, 'quiet');
    await ready(teams.a.ns, 'flooder', 'Running');
    await ready(teams.b.ns, 'quiet', 'Running');
    // Team a asks for 200 events a second, far over any bucket: its share runs dry and stays dry.
    await configMap(teams.a, 'flood', 'flooder', { flood: '200' });
    await eventually('team a over its event share', async () => (await droppedEvents()).some((line) => line.includes(`tenant="${teams.a.ns}"`) && line.includes('source="function"')), 60_000);
    // Meanwhile team b's one reconcile asks for 10 events and a write to team a (refused by the router).
    await configMap(teams.b, 'burst', 'quiet', { events: '10', escape: teams.a.ns });
    const seen = await eventually("all of team b's events and the router's ActionRefused", async () => {
      const items = await eventsIn(teams.b.ns);
      const neighbour = items.filter((e) => e.reason === 'Neighbour' && e.regarding?.name === 'burst');
      const refused = items.find((e) => e.reason === 'ActionRefused' && e.regarding?.name === 'burst');
      return new Set(neighbour.map((e) => e.note)).size === 10 && refused && { neighbour, refused };
    }, 60_000);
    expect(seen.refused.note).toContain(`${teams.a.ns} is not the Loop's namespace`);
    // Team b dropped nothing: its flood-free share held.
    expect((await droppedEvents()).filter((line) => line.includes(`tenant="${teams.b.ns}"`))).toEqual([]);
    await teams.a.admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${teams.a.ns}/configmaps/flood` });
  }, 240_000);
});

describe('a namespace admin reconciling many objects', () => {
  it("keeps team b's flight-recorder history while team a's reconciles overflow the recorder", async () => {
    for (let i = 0; i < 5; i += 1) await configMap(teams.b, `kept-${i}`, 'quiet');
    const loopB = `${teams.b.ns}/quiet`;
    await eventually("team b's five objects in the recorder", async () => [0, 1, 2, 3, 4].every((i) => router.history.history(loopB, `${teams.b.ns}/kept-${i}`).length > 0), 60_000);
    // More objects than the whole recorder holds (40), all team a's.
    for (let i = 0; i < HISTORY.objects + 5; i += 1) await configMap(teams.a, `many-${i}`, 'flooder');
    const loopA = `${teams.a.ns}/flooder`;
    await eventually("team a's latest object in the recorder", async () => router.history.history(loopA, `${teams.a.ns}/many-${HISTORY.objects + 4}`).length > 0, 60_000);
    for (let i = 0; i < 5; i += 1) expect(router.history.history(loopB, `${teams.b.ns}/kept-${i}`).length, `team b's kept-${i}`).toBeGreaterThan(0);
    // Team a paid with its own oldest: it holds no more than its share.
    expect(router.history.history(loopA, `${teams.a.ns}/many-0`)).toEqual([]);
    expect(router.history.objects).toBeLessThanOrEqual(HISTORY.objects);
  }, 180_000);
});

describe('a namespace admin creating Loops', () => {
  it(`runs at most ${MAX_LOOPS} of team b's Loops, the oldest first, and starts the next when one is deleted`, async () => {
    // team b already runs `quiet`, its oldest.
    for (const name of ['extra-1', 'extra-2', 'extra-3']) await createLoop(teams.b, name);
    await ready(teams.b.ns, 'extra-1', 'Running');
    await ready(teams.b.ns, 'extra-2', 'Running');
    const held = await ready(teams.b.ns, 'extra-3', 'TenantLimitExceeded');
    expect(held).toMatchObject({ status: 'False' });
    expect(held.message).toContain(`namespace ${teams.b.ns} has 4 Loops and the router runs at most ${MAX_LOOPS} per namespace (--max-loops-per-tenant), the oldest first: this one is number 4`);
    await eventually('a TenantLimitExceeded Warning event', async () => (await eventsIn(teams.b.ns)).some((e) => e.reason === 'TenantLimitExceeded' && e.regarding?.name === 'extra-3'));
    // Team a's Loops are not counted against team b.
    await ready(teams.a.ns, 'flooder', 'Running');
    await teams.b.admin.request({ method: 'DELETE', path: `${loopsIn(teams.b.ns)}/extra-1` });
    await ready(teams.b.ns, 'extra-3', 'Running');
  }, 240_000);
});

describe('a namespace admin deleting a finalizing Loop, then the namespace', () => {
  it('finds the Loop released its primaries, and the namespace goes away', async () => {
    const team = teams.c;
    await createLoop(team, 'keeper', { finalize: true });
    await ready(team.ns, 'keeper', 'Running');
    await configMap(team, 'held', 'keeper');
    await eventually("the Loop's finalizer on its primary", async () => {
      const cm = await h.client.request<V1ConfigMap>({ path: `/api/v1/namespaces/${team.ns}/configmaps/held` });
      return cm.metadata?.finalizers?.includes('loop.kubeloop.dev/keeper');
    });
    await eventually("the router's finalizer on the Loop", async () => (await h.client.request<Loop>({ path: `${loopsIn(team.ns)}/keeper` })).metadata.finalizers?.includes(RELEASE_PRIMARIES_FINALIZER));
    await team.admin.request({ method: 'DELETE', path: `${loopsIn(team.ns)}/keeper` });
    await eventually('the Loop gone', async () => h.client.request({ path: `${loopsIn(team.ns)}/keeper` }).then(() => false, (error: unknown) => isApiError(error, 404)), 60_000);
    const released = await h.client.request<V1ConfigMap>({ path: `/api/v1/namespaces/${team.ns}/configmaps/held` });
    expect(released.metadata?.finalizers ?? []).not.toContain('loop.kubeloop.dev/keeper');
    // Before, the primary kept loop.kubeloop.dev/keeper and the namespace stayed Terminating for ever.
    await h.client.request({ method: 'DELETE', path: `/api/v1/namespaces/${team.ns}` });
    await eventually('the namespace gone', async () => h.client.request({ path: `/api/v1/namespaces/${team.ns}` }).then(() => false, (error: unknown) => isApiError(error, 404)), 120_000);
  }, 240_000);
});

describe('the admin of a namespace named cluster', () => {
  it("is a tenant of its own: its calls are not counted as the ClusterLoops' (and never share their shares)", async () => {
    await h.client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: CLUSTER_NAMESPACE } } });
    const team = { ns: CLUSTER_NAMESPACE, admin: await namespaceAdmin(h.client, CLUSTER_NAMESPACE, `admin-cluster-${teams.a.ns}`) };
    await grantTeam(team);
    await createLoop(team, 'lookalike');
    await ready(CLUSTER_NAMESPACE, 'lookalike', 'Running');
    // A ClusterLoop over team a's ConfigMaps labelled for it, running as team a's ServiceAccount.
    await h.client.request({
      method: 'POST',
      path: `${API}/clusterloops`,
      body: {
        apiVersion: 'kubeloop.dev/v1alpha1',
        kind: 'ClusterLoop',
        metadata: { name: clusterLoopName(), labels: h.loopSelector.matchLabels },
        spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, namespaces: [teams.a.ns], selector: { matchLabels: { loop: 'cluster-loop' } }, serviceAccount: { namespace: teams.a.ns, name: 'copier' }, function: { url: served.url } },
      },
    });
    await configMap(team, 'one', 'lookalike');
    await configMap(teams.a, 'two', 'cluster-loop');
    const started = await eventually('calls started for both tenants', async () => {
      const counts = await callsStarted();
      return (counts.get(CLUSTER_NAMESPACE) ?? 0) > 0 && (counts.get(CLUSTER_TENANT) ?? 0) > 0 && counts;
    }, 90_000);
    // Before, both were the one tenant "cluster": one label, one share, one weight.
    expect(started.get(CLUSTER_NAMESPACE)).toBeGreaterThan(0);
    expect(started.get(CLUSTER_TENANT)).toBeGreaterThan(0);
  }, 240_000);
});

describe('a namespace admin restarting a Loop in a tight loop', () => {
  it("is held to its namespace's Loop start rate (StartThrottled), team b's new Loop still starts, and team a's runs its last spec", async () => {
    await createLoop(teams.a, 'churn');
    const throttled = async () => Number(/^kubeloop_router_loop_starts_throttled_total(?:\{[^}]*\})? (\d+)$/m.exec(await router.metrics.registry.metrics())?.[1] ?? 0);
    const before = await throttled();
    // Each spec change is a restart the router pays for with its own requests (access review, list, watch, status).
    for (let i = 1; i <= 12; i += 1) {
      await teams.a.admin.request({ method: 'PATCH', path: `${loopsIn(teams.a.ns)}/churn`, contentType: 'application/merge-patch+json', body: { spec: { function: { maxConcurrency: i } } } });
    }
    const generation = (await h.client.request<Loop>({ path: `${loopsIn(teams.a.ns)}/churn` })).metadata.generation;
    await eventually('team a held back by its Loop start rate', async () => (await throttled()) > before, 90_000);
    // Room under team b's Loop limit (it runs quiet, extra-2, extra-3) for a new Loop.
    await teams.b.admin.request({ method: 'DELETE', path: `${loopsIn(teams.b.ns)}/extra-2` });
    await createLoop(teams.b, 'prompt');
    await ready(teams.b.ns, 'prompt', 'Running');
    // Held back, never dropped.
    await eventually('team a\'s Loop runs its last spec', async () => {
      const loop = await h.client.request<Loop>({ path: `${loopsIn(teams.a.ns)}/churn` });
      const condition = loop.status?.conditions?.find((c) => c.type === 'Ready');
      return condition?.reason === 'Running' && condition.observedGeneration === generation;
    }, 120_000);
  }, 300_000);
});
