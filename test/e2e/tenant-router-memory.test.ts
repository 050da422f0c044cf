// Issue 38, attacked as a user bound only to the built-in admin role in one namespace: what a tenant can
// make the shared router hold in memory. A Loop relating 4 x 8 ConfigMaps of 900 kB to a function that never
// answers (each request ~30 MB) is RequestTooLarge and nothing is sent; two Loops with 16 related entries of
// distinct `fields` share one ConfigMap informer; a PodSet of 400,000 empty objects in an unknown field is
// pruned by the seed CRD, and the same bomb in a CRD that preserves unknown fields is refused before it is
// parsed (ObjectTooLarge). The router runs in this process, as router-harness.ts starts it: its memory is
// this process's, sampled while each attack runs.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Loop, LoopCondition, LoopSpec } from '../../api/loop.ts';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { defineFunction, respond } from '../../lib/sdk/index.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { renderChart } from './chart-render.ts';
import { installCrds, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { namespaceAdmin, refusalOf } from './tenant-admin.ts';
import { installTenantRoles } from './tenant-kit.ts';

const MiB = 1024 * 1024;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const LOOPS = '/apis/kubeloop.dev/v1alpha1';
/** The chart's router memory limit (charts/kubeloop/values.yaml router.resources.limits.memory). */
const CHART_LIMIT = 256 * MiB;
const BOMB_CRD = 'bombs.e2e.kubeloop.dev';

let h: RouterHarness;
let ns: string;
let admin: KubeClient;
let router: Router;
let echo: ServedFunction;
let hang: Server;
let hangUrl: string;
let hangCalls = 0;
const requests: ReconcileRequest[] = [];
const tenantRoles: string[] = [];

/** The highest RSS of this process (the router's) while `attack` runs and until `until` holds. */
async function peakRss<T>(attack: () => Promise<T>): Promise<{ result: T; base: number; peak: number }> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 25);
  try {
    const result = await attack();
    return { result, base, peak: Math.max(peak, process.memoryUsage().rss) };
  } finally {
    clearInterval(timer);
  }
}

async function metric(name: string, labels: string): Promise<number | undefined> {
  const text = await router.metrics.registry.getSingleMetricAsString(name);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function ready(name: string, reason: string): Promise<LoopCondition> {
  return eventually(`Loop ${ns}/${name} Ready reason ${reason}`, async () => {
    const loop = await h.client.request<Loop>({ path: `${LOOPS}/namespaces/${ns}/loops/${name}` });
    const condition = loop.status?.conditions?.find((c) => c.type === 'Ready');
    return condition?.reason === reason && condition;
  }, 90_000);
}

/** A Loop in the tenant's namespace, created by the tenant's admin, run by this suite's router. */
async function createLoop(name: string, spec: Partial<LoopSpec>): Promise<void> {
  await admin.request({
    method: 'POST',
    path: `${LOOPS}/namespaces/${ns}/loops`,
    body: { apiVersion: 'kubeloop.dev/v1alpha1', kind: 'Loop', metadata: { name, labels: h.loopSelector.matchLabels }, spec: { serviceAccount: { name: 'reader' }, ...spec } },
  });
}

async function warnings(reason: string): Promise<Array<{ regarding?: { name?: string; kind?: string } }>> {
  const events = await h.client.request<{ items: Array<{ reason?: string; regarding?: { name?: string; kind?: string } }> }>({ path: `/apis/events.k8s.io/v1/namespaces/${ns}/events` });
  return events.items.filter((e) => e.reason === reason);
}

/**
 * `object` as JSON text with 400,000 empty objects (1.2 MB on the wire, ~30 MiB of heap once parsed) in place
 * of the string BOGUS, written as text so this process never holds them as objects.
 */
const withBomb = (object: unknown): string => JSON.stringify(object).replace('"BOGUS"', `[${'{},'.repeat(399_999)}{}]`);

/** Creates an object as the tenant from its text; the answer (the object again) is read and dropped unparsed. */
async function createRaw(path: string, text: string): Promise<void> {
  const body = await admin.stream({ method: 'POST', path, body: text });
  for await (const _chunk of body) {
    // drained
  }
}

beforeAll(async () => {
  h = await routerHarness('tenant-router-memory');
  ns = h.suite.namespace;
  await installCrds(h.client, ['clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml', 'podsets.app.kubeloop.dev.yaml']);
  // A CRD as many are written: its spec preserves unknown fields (the router's own bound must hold there).
  await h.client.request({
    method: 'PATCH',
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${BOMB_CRD}`,
    query: { fieldManager: 'kubeloop-e2e', force: true },
    contentType: 'application/apply-patch+yaml',
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: BOMB_CRD },
      spec: {
        group: 'e2e.kubeloop.dev',
        scope: 'Namespaced',
        names: { kind: 'Bomb', plural: 'bombs', singular: 'bomb', listKind: 'BombList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } }],
      },
    },
  });
  await eventually('the Bomb kind served', () => h.client.request({ path: `/apis/e2e.kubeloop.dev/v1/namespaces/${ns}/bombs` }).then(() => true, () => false));
  // The chart's aggregated tenant roles (admin gets Loops), named after this suite.
  const { manifests } = await renderChart(h.suite.binaries.helm, { namespace: ns });
  tenantRoles.push(...(await installTenantRoles(h.client, manifests, ns)));
  const user = `mallory-${ns}`;
  admin = await namespaceAdmin(h.client, ns, user);
  // A namespace user may create the objects a Loop watches: here PodSets and Bombs, which admin does not cover.
  await h.client.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/roles`, body: { metadata: { name: 'custom-kinds' }, rules: [{ apiGroups: ['app.kubeloop.dev', 'e2e.kubeloop.dev'], resources: ['podsets', 'bombs'], verbs: ['*'] }] } });
  await h.client.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/rolebindings`,
    body: { metadata: { name: 'custom-kinds' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'custom-kinds' }, subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }] },
  });
  // The API server's RBAC cache honours the fresh RoleBinding a moment later.
  await eventually('the admin may create ServiceAccounts', async () => (await refusalOf(admin, `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'reader' } })) === undefined);
  // The tenant's ServiceAccount for its Loops: reads what they watch, in its namespace only.
  await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: 'reader' } } });
  await admin.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/roles`,
    body: {
      metadata: { name: 'reader' },
      rules: [
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['app.kubeloop.dev'], resources: ['podsets'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['e2e.kubeloop.dev'], resources: ['bombs'], verbs: ['get', 'list', 'watch'] },
      ],
    },
  });
  await admin.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/rolebindings`,
    body: { metadata: { name: 'reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' }, subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }] },
  });
  echo = await serveFunction(defineFunction({ name: 'memory-echo', reconcile: (request: ReconcileRequest) => (requests.push(request), respond([])) }), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  // A function that never answers: every call holds its request until the Loop's timeout.
  hang = createServer((request) => {
    hangCalls += 1;
    request.resume();
  });
  await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
  hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/`;
  router = await h.router(undefined, { loopSelector: h.loopSelector });
  await eventually('admin may create Loops (aggregated)', () =>
    admin.request({ method: 'POST', path: `${LOOPS}/namespaces/${ns}/loops`, query: { dryRun: 'All' }, body: { apiVersion: 'kubeloop.dev/v1alpha1', kind: 'Loop', metadata: { name: 'probe' }, spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, serviceAccount: { name: 'reader' }, function: { url: echo.url } } } }).then(() => true, () => false),
  );
}, 240_000);

afterAll(async () => {
  if (hang) {
    hang.closeAllConnections();
    await new Promise((resolve) => hang.close(resolve));
  }
  await echo?.close();
  await h?.client.request({ method: 'DELETE', path: `${LOOPS}/namespaces/${ns}/loops` }).catch(() => {});
  for (const name of tenantRoles) await h?.client.request({ method: 'DELETE', path: `${RBAC}/clusterroles/${name}` }).catch(() => {});
  await h?.close();
});

describe('a namespace admin attacking the shared router\'s memory', () => {
  it('relates 4 x 8 ConfigMaps of 900 kB to a function that never answers: the Loop is RequestTooLarge, nothing is sent, memory stays bounded', async () => {
    for (let i = 0; i < 8; i++) {
      await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: `blob-${i}`, labels: { bomb: 'yes' } }, data: { blob: 'x'.repeat(900_000) } } });
      await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: `primary-${i}`, labels: { role: 'primary' } } } });
    }
    const related = ['a', 'b', 'c', 'd'].map((name) => ({ name, apiVersion: 'v1', kind: 'ConfigMap', selector: { matchLabels: { bomb: 'yes' } } }));
    const { base, peak } = await peakRss(async () => {
      await createLoop('bomb', { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { role: 'primary' } }, related, function: { url: hangUrl, timeoutSeconds: 60, maxConcurrency: 8 } });
      const condition = await ready('bomb', 'RequestTooLarge');
      expect(condition.message).toContain('--max-related-bytes-per-request');
      // Every primary is tried (and backs off); none of the ~30 MB requests is built.
      await eventually('a RequestTooLarge warning on each primary', async () => new Set((await warnings('RequestTooLarge')).map((e) => e.regarding?.name)).size === 8);
    });
    expect(hangCalls).toBe(0);
    expect(await metric('kubeloop_router_requests_too_large_total', `loop="${ns}/bomb"`)).toBeGreaterThanOrEqual(8);
    // Before the caps 8 such requests in flight took the router from ~100 to ~580 MiB. The objects themselves
    // are cached once (7 MB); the rest of this process (test runner, functions) is not the router's.
    console.log(`related bomb: rss ${Math.round(base / MiB)} -> peak ${Math.round(peak / MiB)} MiB`);
    expect(peak - base).toBeLessThan(64 * MiB);
    expect(process.memoryUsage().heapUsed).toBeLessThan(CHART_LIMIT);
  }, 180_000);

  it('opens one ConfigMap watch for two Loops of 16 related entries with distinct fields, and caches each object once', async () => {
    const related = (loop: string) => Array.from({ length: 16 }, (_, i) => ({ name: `f${i}`, apiVersion: 'v1', kind: 'ConfigMap', fields: [`data.${loop}${i}`] }));
    for (const loop of ['x', 'y']) await createLoop(`fields-${loop}`, { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { role: 'primary' } }, related: related(loop), function: { url: echo.url } });
    await ready('fields-x', 'Running');
    await ready('fields-y', 'Running');
    const sent = await eventually('a request of fields-x with its projections', async () => requests.find((r) => r.loop === 'fields-x' && r.related?.f3 !== undefined));
    // Projected when the request is built: metadata and the listed field only (the 900 kB blob is not sent).
    expect(sent.related?.f3?.find((o) => o.metadata?.name === 'blob-0')).toEqual(expect.not.objectContaining({ data: expect.anything() }));
    // Before: one informer per distinct fields list (32 here, and one for the primaries), each a copy.
    // The bomb Loop of the previous test watches the same kind in the same namespace: still one.
    expect(await metric('kubeloop_router_informers', 'resource="ConfigMap.v1"')).toBe(1);
    const cached = await metric('kubeloop_router_cached_bytes', `tenant="${ns}"`);
    expect(cached).toBeGreaterThan(8 * 900_000);
    expect(cached).toBeLessThan(1.5 * 8 * 900_000);
  }, 180_000);

  it('has a PodSet of 400,000 empty objects in an unknown field pruned, and the same bomb in a CRD that keeps it refused before it is parsed', async () => {
    await createLoop('podsets', { for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' }, function: { url: echo.url } });
    await createLoop('bombs', { for: { apiVersion: 'e2e.kubeloop.dev/v1', kind: 'Bomb' }, function: { url: echo.url } });
    await ready('podsets', 'Running');
    await ready('bombs', 'Running');
    const { base, peak } = await peakRss(async () => {
      for (let i = 0; i < 4; i++) {
        const podSet = { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: `bomb-${i}` }, spec: { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'busybox' }], bogus: 'BOGUS' } } } };
        await createRaw(`/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`, withBomb(podSet));
        await createRaw(`/apis/e2e.kubeloop.dev/v1/namespaces/${ns}/bombs`, withBomb({ apiVersion: 'e2e.kubeloop.dev/v1', kind: 'Bomb', metadata: { name: `bomb-${i}` }, spec: { bogus: 'BOGUS' } }));
      }
      await eventually('an ObjectTooLarge warning on each Bomb', async () => (await warnings('ObjectTooLarge')).filter((e) => e.regarding?.kind === 'Bomb').length === 4);
      await eventually('each pruned PodSet reconciled', async () => new Set(requests.filter((r) => r.loop === 'podsets').map((r) => r.object.metadata?.name)).size === 4);
    });
    const stored = await h.client.request<{ spec: { template: { spec: Record<string, unknown> } } }>({ path: `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets/bomb-0` });
    expect(stored.spec.template.spec.bogus).toBeUndefined();
    expect(requests.some((r) => r.loop === 'bombs')).toBe(false);
    // Parsed before counting, four such events grew the dev router by 157-194 MiB.
    console.log(`podset bomb: rss ${Math.round(base / MiB)} -> peak ${Math.round(peak / MiB)} MiB`);
    expect(peak - base).toBeLessThan(64 * MiB);
  }, 180_000);
});
