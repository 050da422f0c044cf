// A namespace tenant's Loop, end to end on the real control plane: a user bound only to the built-in admin
// role in team-a (a RoleBinding; the chart's aggregated ClusterRoles give admin the Loop kind) ships a Loop
// that a real function over HTTP reconciles, and reaches nothing outside team-a: a ServiceAccount of team-b
// (the chart's admission policy, and the router when the policy is bypassed), a cluster-scoped kind, a write
// to team-b. The router runs with the chart's own router ClusterRole and nothing else: the tenant grants it,
// in team-a only, what their Loop needs. An editor cannot create a ClusterLoop, and a ResourceQuota counts Loops.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Loop, LoopCondition, LoopSpec } from '../../api/loop.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, respond } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { byKind, renderChart, type Manifest } from './chart-render.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { chartRouterIdentity, installTenantRoles } from './tenant-kit.ts';
import { namespaceAdmin, refusalOf, untilLoopPolicyEnforced } from './tenant-admin.ts';

let h: RouterHarness;
let teamA: string;
let teamB: string;
let admin: KubeClient;
let editor: KubeClient;
let served: ServedFunction;
const requests: ReconcileRequest[] = [];
const API = '/apis/kubeloop.dev/v1alpha1';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const policyName = () => `${teamA}-loops`;
const routerUser = () => `kubeloop-router-${teamA}`;
const tenantRoles: string[] = [];
const loopsIn = (ns: string) => `${API}/namespaces/${ns}/loops`;
/** Loops with this label are checked by the chart's policy; the router runs those with h.loopSelector's. */
const policed = () => ({ 'kubeloop.dev/e2e-admission': teamA });

beforeAll(async () => {
  h = await routerHarness('tenant-loops');
  teamA = h.suite.namespace;
  teamB = `${teamA}-b`;
  await h.client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: teamB } } });
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml']);
  const { manifests } = await renderChart(h.suite.binaries.helm, { namespace: teamA });
  // The aggregated tenant roles as rendered, named after this suite (other suites install the chart on the
  // same control plane), and the Loop policy bound to this suite's Loops.
  tenantRoles.push(...(await installTenantRoles(h.client, manifests, teamA)));
  expect(tenantRoles).toHaveLength(3);
  const ofLoops = (m: Manifest) => m.metadata.name.endsWith('-loops');
  const policy = byKind(manifests, 'ValidatingAdmissionPolicy').find(ofLoops) as Manifest & { spec: Record<string, unknown> };
  const binding = byKind(manifests, 'ValidatingAdmissionPolicyBinding').find(ofLoops) as Manifest & { spec: Record<string, unknown> };
  await h.client.request({ method: 'POST', path: `${ADMISSION}/validatingadmissionpolicies`, body: { ...policy, metadata: { name: policyName() } } });
  await h.client.request({
    method: 'POST',
    path: `${ADMISSION}/validatingadmissionpolicybindings`,
    body: { ...binding, metadata: { name: policyName() }, spec: { ...binding.spec, policyName: policyName(), matchResources: { objectSelector: { matchLabels: policed() } } } },
  });
  await untilLoopPolicyEnforced(h.client, teamA, policed());
  // The router's identity: exactly the chart's router ClusterRole (Loops, their status, events, reviews, Services).
  const routerKubeConfig = await chartRouterIdentity(h.client, manifests, routerUser(), h.suite.server);
  // Two users with nothing but a built-in role in team-a: admin and edit.
  admin = await namespaceAdmin(h.client, teamA, `alice-${teamA}`);
  editor = await namespaceAdmin(h.client, teamA, `bob-${teamA}`, 'edit');
  // Copies each primary ConfigMap into "<name>-child" in its namespace, and into data.target's when it names one.
  const copier = defineFunction({
    name: 'tenant-copier',
    reconcile: (request: ReconcileRequest) => {
      requests.push(request);
      const source = request.object as V1ConfigMap & ReconcileRequest['object'];
      const name = `${source.metadata?.name}-child`;
      const target = source.data?.target;
      return respond([
        { op: 'apply', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: source.data ?? {} } },
        ...(target ? [{ op: 'apply' as const, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: target }, data: {} } }] : []),
      ]);
    },
  });
  served = await serveFunction(copier, { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  await h.router(undefined, { kubeConfig: routerKubeConfig, loopSelector: h.loopSelector });
});
afterAll(async () => {
  await served?.close();
  for (const path of [
    `${ADMISSION}/validatingadmissionpolicybindings/${policyName()}`,
    `${ADMISSION}/validatingadmissionpolicies/${policyName()}`,
    `/api/v1/namespaces/${teamB}`,
    `${RBAC}/clusterrolebindings/${routerUser()}`,
    `${RBAC}/clusterroles/${routerUser()}`,
    ...tenantRoles.map((name) => `${RBAC}/clusterroles/${name}`),
  ]) {
    await h.client.request({ method: 'DELETE', path }).catch(() => {});
  }
  for (const ns of [teamA, teamB]) await h.client.request({ method: 'DELETE', path: loopsIn(ns) }).catch(() => {});
  await h?.close();
});

function loopBody(name: string, spec: Partial<LoopSpec>, labels: Record<string, string>): Loop {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'Loop',
    metadata: { name, labels },
    spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, serviceAccount: { name: 'copier' } as LoopSpec['serviceAccount'], function: { url: served.url }, ...spec },
  };
}

/** Creates a Loop in team-a as `client`; undefined when admitted, the refusal's message otherwise. */
async function create(client: KubeClient, body: Loop, dryRun = false): Promise<string | undefined> {
  try {
    await client.request({ method: 'POST', path: loopsIn(teamA), body, ...(dryRun ? { query: { dryRun: 'All' } } : {}) });
    return undefined;
  } catch (error) {
    if (isApiError(error)) return error.message;
    throw error;
  }
}

async function ready(name: string, reason: string): Promise<LoopCondition> {
  return eventually(`Loop ${teamA}/${name} Ready reason ${reason}`, async () => {
    const loop = await h.client.request<Loop>({ path: `${loopsIn(teamA)}/${name}` });
    const condition = loop.status?.conditions?.find((c) => c.type === 'Ready');
    return condition?.reason === reason && condition;
  }, 60_000);
}

describe('a namespace admin with nothing but admin in team-a', () => {
  it('creates a ServiceAccount, a Role and a Loop there, and a function reconciles it end to end', async () => {
    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${teamA}/serviceaccounts`, body: { metadata: { name: 'copier' } } });
    await admin.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${teamA}/roles`,
      body: { metadata: { name: 'copier' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }] },
    });
    await admin.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${teamA}/rolebindings`,
      body: { metadata: { name: 'copier' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'copier' }, subjects: [{ kind: 'ServiceAccount', name: 'copier', namespace: teamA }] },
    });
    // What the router needs for this Loop, granted by the tenant in their namespace only: acting as the
    // ServiceAccount, and reading the kinds its informers share (docs/tenants.md).
    await admin.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${teamA}/roles`,
      body: {
        metadata: { name: 'kubeloop-router' },
        rules: [
          { apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['copier'], verbs: ['impersonate'] },
          { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
        ],
      },
    });
    await admin.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${teamA}/rolebindings`,
      body: { metadata: { name: 'kubeloop-router' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'kubeloop-router' }, subjects: [{ kind: 'User', name: routerUser(), apiGroup: 'rbac.authorization.k8s.io' }] },
    });
    // The aggregation controller adds the Loop kind to admin shortly after the tenant role appears.
    const body = loopBody('copier', { owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }], selector: { matchLabels: { role: 'primary' } } }, h.loopSelector.matchLabels);
    await eventually('admin may create Loops', async () => (await create(admin, body, true)) === undefined);
    expect(await create(admin, body)).toBeUndefined();
    await ready('copier', 'Running');

    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${teamA}/configmaps`, body: { metadata: { name: 'settings', labels: { role: 'primary' } }, data: { colour: 'blue' } } });
    const child = await eventually('the child ConfigMap', () =>
      h.client.request<V1ConfigMap>({ path: `/api/v1/namespaces/${teamA}/configmaps/settings-child` }).catch(() => undefined),
    );
    expect(child.data).toEqual({ colour: 'blue' });
    expect(child.metadata?.managedFields?.map((f) => f.manager)).toContain(`kubeloop/${teamA}/copier`);
    expect(child.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'ConfigMap', name: 'settings', controller: true });
    expect(requests.find((r) => r.object.metadata?.name === 'settings')).toMatchObject({ loop: 'copier', loopNamespace: teamA });
  });

  it('has a write to team-b refused with a Warning event, and nothing lands in team-b', async () => {
    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${teamA}/configmaps`, body: { metadata: { name: 'escape', labels: { role: 'primary' } }, data: { target: teamB } } });
    const refused = await eventually('an ActionRefused event on the primary', async () => {
      const events = await h.client.request<{ items: Array<{ reason?: string; note?: string; regarding?: { name?: string } }> }>({ path: `/apis/events.k8s.io/v1/namespaces/${teamA}/events` });
      return events.items.find((e) => e.reason === 'ActionRefused' && e.regarding?.name === 'escape');
    });
    expect(refused.note).toContain(`Loop ${teamA}/copier may not apply ConfigMap v1 ${teamB}/escape-child: ${teamB} is not the Loop's namespace`);
    // The same reply's write in team-a went through: the refusal was the only thing withheld.
    await eventually('the own-namespace child', () => h.client.request({ path: `/api/v1/namespaces/${teamA}/configmaps/escape-child` }).catch(() => undefined));
    const inB = await h.client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${teamB}/configmaps`, query: { fieldSelector: 'metadata.name=escape-child' } });
    expect(inB.items).toEqual([]);
  });

  it('cannot name a ServiceAccount of team-b: the admission policy says why, and so does the router when the policy is bypassed', async () => {
    const reaching: Array<[Partial<LoopSpec>, string]> = [
      [{ serviceAccount: { namespace: teamB, name: 'copier' } }, `spec.serviceAccount.namespace ${teamB}: a Loop acts as a ServiceAccount of its own namespace (${teamA}) only`],
      [{ function: { ref: { name: 'fn', namespace: teamB, port: 80 } } }, `spec.function.ref.namespace ${teamB}: a Loop calls a function of its own namespace (${teamA}) only`],
      [{ related: [{ name: 'cfg', apiVersion: 'v1', kind: 'ConfigMap', namespace: teamB }] }, `omit the namespace of cfg (${teamB})`],
      [{ namespaces: [teamA, teamB] }, `spec.namespaces: a Loop watches its own namespace (${teamA}) only`],
      [{ function: { url: `http://copier.${teamA}.svc:8080/`, signingSecretRef: { name: 'key', namespace: teamB, key: 'secret' } } }, `spec.function.signingSecretRef.namespace ${teamB}`],
    ];
    for (const [spec, message] of reaching) {
      const url = 'http://copier.' + teamA + '.svc:8080/';
      expect(await create(admin, loopBody('reach', { function: { url }, ...spec }, policed()), true)).toContain(message);
    }
    // The same Loop confined to team-a passes the policy.
    expect(await create(admin, loopBody('reach', { function: { url: `http://copier.${teamA}.svc:8080/` }, namespaces: [teamA] }, policed()), true)).toBeUndefined();
    // Without the policy (its binding selects by label), the router refuses the same Loop.
    expect(await create(h.client, loopBody('bypass', { serviceAccount: { namespace: teamB, name: 'copier' } }, h.loopSelector.matchLabels))).toBeUndefined();
    const condition = await ready('bypass', 'InvalidSpec');
    expect(condition.message).toContain(`Loop ${teamA}/bypass: spec.serviceAccount.namespace "${teamB}": a Loop acts as a ServiceAccount of its own namespace (${teamA}) only`);
  });

  it('cannot own a cluster-scoped kind: Ready=False InvalidSpec names it', async () => {
    expect(await create(admin, loopBody('nodes', { owns: [{ apiVersion: 'v1', kind: 'Node' }] }, h.loopSelector.matchLabels))).toBeUndefined();
    const condition = await ready('nodes', 'InvalidSpec');
    expect(condition.message).toContain('spec.owns[0] Node (v1) is cluster-scoped: a Loop reaches only namespaced kinds in its own namespace');
  });
});

describe('RBAC and quota', () => {
  it('gives an editor of team-a Loops there but no ClusterLoop', async () => {
    const body = loopBody('edited', {}, {});
    await eventually('edit may create Loops', async () => (await create(editor, body, true)) === undefined);
    const clusterLoop = { ...body, kind: 'ClusterLoop', metadata: { name: `edited-${teamA}` }, spec: { ...body.spec, serviceAccount: { namespace: teamA, name: 'copier' } } };
    const refused = await editor.request({ method: 'POST', path: `${API}/clusterloops`, body: clusterLoop, query: { dryRun: 'All' } }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isApiError(refused, 403)).toBe(true);
  });

  it('enforces a ResourceQuota on the count of Loops', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${teamB}/resourcequotas`, body: { metadata: { name: 'loops' }, spec: { hard: { 'count/loops.kubeloop.dev': '1' } } } });
    // Quota admission charges a Loop only once the quota has a usage in status. The quota controller writes it on
    // its first sync of the new quota, but counts Loops only once its discovery has seen the CRD (up to 30 s after
    // it appears), and if it had not, nothing recounts until its five-minute resync. Were the first Loop created
    // while that first sync was still under way, its retry could count from a cache that had not seen the Loop
    // yet and write used=0 over admission's charge (one fresh-clone run admitted a second Loop so). So the test
    // waits for the controller's first sync, and if it could not count Loops yet, writes the empty namespace's
    // usage itself: the controller keeps a usage it cannot count, and counts the same Loops when it can.
    const count = 'count/loops.kubeloop.dev';
    const synced = await eventually('the quota controller syncs the new quota', async () => {
      const quota = await h.client.request<{ status?: { hard?: Record<string, string>; used?: Record<string, string> } }>({ path: `/api/v1/namespaces/${teamB}/resourcequotas/loops` });
      return quota.status?.hard?.[count] === '1' && quota.status;
    });
    if (synced.used?.[count] === undefined) {
      await h.client.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${teamB}/resourcequotas/loops/status`,
        contentType: 'application/merge-patch+json',
        body: { status: { used: { [count]: '0' } } },
      });
    }
    const body = (name: string) => ({ ...loopBody(name, {}, {}), spec: { ...loopBody(name, {}, {}).spec, function: { url: `http://copier.${teamB}.svc:8080/` } } });
    // Admission reads quotas from its own cache, which may lag the usage just written: until it sees it, a Loop is
    // refused as "status unknown", and a dry run checked against the usage before the first Loop's charge passes.
    await eventually('team-b takes its first Loop', async () => {
      const message = await refusalOf(h.client, loopsIn(teamB), body('first'), false);
      if (message !== undefined) throw new Error(message);
      return true;
    });
    const refusal = await eventually('the quota refuses a second Loop', async () => {
      const message = await refusalOf(h.client, loopsIn(teamB), body('second'));
      if (!message?.includes('exceeded quota')) throw new Error(message ?? 'admitted');
      return message;
    });
    expect(refusal).toContain('exceeded quota: loops, requested: count/loops.kubeloop.dev=1, used: count/loops.kubeloop.dev=1, limited: count/loops.kubeloop.dev=1');
  });
});
