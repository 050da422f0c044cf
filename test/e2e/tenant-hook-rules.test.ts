// A namespace admin's AdmissionHooks attacked on the real control plane (issue 38, items 1, 2 and 15): a mutating
// hook on resourcequotas/status or EndpointSlices is refused (the chart's policy, and the gateway for hooks the
// policy never saw), a mutating hook may match only what its author and its ServiceAccount may update and patch,
// a hook that never answers holds neither the ReplicaSet controller (kube-system identities are kept out of
// namespaced entries) nor, past a few failures, the team's own requests (circuit breaker), and a team's hooks
// past --tenant-max-hooks are left out, the oldest served.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { allow, defineAdmission } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { installTenantPolicies, namespaceAdmin, refusalOf, type TenantPolicies } from './tenant-admin.ts';
import { deleteNamespace, HOOK_SUITE_LABEL, installWatcherCrd, startWebhookFor, type WebhookUnderTest } from './webhook-harness.ts';
import { DEFAULT_TENANT_CONFIGURATIONS, tenantBucket, tenantConfigurationName } from '../../webhooks/lifecycle/hook-configuration-shards.ts';

let suite: ClusterSuite;
let teamA: string;
let teamB: string;
let client: KubeClient;
let alice: KubeClient;
let bob: KubeClient;
let policies: TenantPolicies;
let under: WebhookUnderTest;
let fn: ServedFunction;
/** A function that never answers: the users whose requests reached it, and the responses it holds. */
let stall: Server;
let stallUrl: string;
const stalled: ServerResponse[] = [];
const stallUsers: string[] = [];
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const hooksIn = (ns: string) => `/apis/kubeloop.dev/v1alpha1/namespaces/${ns}/admissionhooks`;

function hookBody(name: string, spec: Partial<AdmissionHookSpec>, labels: Record<string, string> = {}): AdmissionHook {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'AdmissionHook',
    metadata: { name, labels: { [HOOK_SUITE_LABEL]: suite.namespace, ...labels } },
    spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], serviceAccount: { name: 'gate' } as AdmissionHookSpec['serviceAccount'], function: { url: `${fn.url}/admit` }, ...spec },
  };
}

/** The policy's answer to `alice` creating the hook (a dry run, checked by the chart's policy). */
const policyRefusal = (spec: Partial<AdmissionHookSpec>) => refusalOf(alice, hooksIn(teamA), hookBody('probe', { function: { service: { name: 'fn', namespace: teamA, port: 8080 } }, ...spec }, policies.label));

async function condition(ns: string, name: string, type = 'Ready') {
  const hook = await client.request<AdmissionHook>({ path: `${hooksIn(ns)}/${name}` });
  return hook.status?.conditions?.find((c) => c.type === type && (type !== 'Ready' || c.observedGeneration === hook.metadata?.generation));
}

const rule = (apiGroups: string[], resources: string[], operations: Array<'CREATE' | 'UPDATE'> = ['UPDATE']) => [{ operations, apiGroups, apiVersions: ['*'], resources }];

function replicaSet(name: string) {
  const labels = { app: name };
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name }, spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } } };
}

const podsOf = async (ns: string, app: string) => (await client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${ns}/pods`, query: { labelSelector: `app=${app}` } })).items.length;

beforeAll(async () => {
  suite = await setupClusterSuite('tenant-hook-rules');
  teamA = suite.namespace;
  teamB = `${teamA}-b`;
  client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: teamB } } });
  await installWatcherCrd(suite);
  policies = await installTenantPolicies(client, suite.binaries.helm, teamA);
  alice = await namespaceAdmin(client, teamA, `alice-${teamA}`);
  bob = await namespaceAdmin(client, teamB, `bob-${teamB}`);
  fn = await serveFunction(defineAdmission({ name: 'allow-all', type: 'validating', admit: () => allow() }), { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'fn', level: 'silent' }) });
  stall = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      stallUsers.push((JSON.parse(body) as { userInfo?: { username?: string } }).userInfo?.username ?? '');
      stalled.push(response);
    });
  });
  await new Promise<void>((resolve) => stall.listen(0, '127.0.0.1', resolve));
  stallUrl = `http://127.0.0.1:${(stall.address() as AddressInfo).port}/admit`;
  under = await startWebhookFor(suite, [`--only-namespace=${teamB}`, '--tenant-max-hooks=3', '--hook-breaker-failures=3', '--hook-breaker-cool-down-seconds=600', '--access-review-seconds=3600']);
  for (const [user, ns] of [[alice, teamA], [bob, teamB]] as const) await user.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name: 'gate' } } });
  await eventually('admin may create AdmissionHooks', async () => (await policyRefusal({})) === undefined);
});

afterAll(async () => {
  for (const ns of [teamA, teamB]) await client?.request({ method: 'DELETE', path: hooksIn(ns) }).catch(() => undefined);
  if (under) {
    await under.webhook.stop({ unregister: true });
    await deleteNamespace(suite, under.certNamespace);
  }
  for (const response of stalled) response.destroy();
  stall?.closeAllConnections();
  await new Promise((resolve) => stall?.close(resolve));
  await fn?.close();
  await policies?.cleanup();
  if (suite) await deleteNamespace(suite, teamB);
  await client?.close();
  await suite?.cleanup();
});

describe("a namespace admin's mutating hook", () => {
  it('is refused on resourcequotas/status and endpointslices: by the policy, and by the gateway (InvalidSpec naming the rule) without it', async () => {
    expect(await policyRefusal({ type: 'mutating', rules: rule([''], ['resourcequotas/status']) })).toContain('resource resourcequotas/status reaches');
    expect(await policyRefusal({ type: 'mutating', rules: rule(['discovery.k8s.io'], ['endpointslices'], ['CREATE', 'UPDATE']) })).toContain('resource endpointslices reaches');
    await alice.request({ method: 'POST', path: hooksIn(teamA), body: hookBody('zero-quota', { type: 'mutating', rules: rule([''], ['resourcequotas/status']) }) });
    await alice.request({ method: 'POST', path: hooksIn(teamA), body: hookBody('steer-slices', { type: 'mutating', rules: rule(['discovery.k8s.io'], ['endpointslices']) }) });
    expect(await eventually('zero-quota refused', () => condition(teamA, 'zero-quota'))).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('rules[0]: resource "resourcequotas/status" reaches a status subresource') });
    expect(await eventually('steer-slices refused', () => condition(teamA, 'steer-slices'))).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining('rules[0]: resource "endpointslices" reaches endpointslices.discovery.k8s.io') });
  });

  it('matches only what its author (policy) and its ServiceAccount (gateway, reviewed again on each RBAC write) may update and patch', async () => {
    // admin may not write Watchers (nothing aggregates them): its hook may not change them either.
    expect(await policyRefusal({ type: 'mutating', rules: rule(['watch.kubeloop.dev'], ['watchers']) })).toContain(`may not update and patch all of watchers (apiGroups watch.kubeloop.dev) in ${teamA}`);
    expect(await policyRefusal({ type: 'mutating', rules: rule([''], ['configmaps']) })).toBeUndefined();
    await alice.request({ method: 'POST', path: hooksIn(teamA), body: hookBody('label-configmaps', { type: 'mutating', rules: rule([''], ['configmaps']) }) });
    expect(await eventually('label-configmaps Forbidden', () => condition(teamA, 'label-configmaps'))).toMatchObject({
      status: 'False',
      reason: 'Forbidden',
      message: expect.stringContaining(`ServiceAccount ${teamA}/gate may not update configmaps in namespace ${teamA}, patch configmaps in namespace ${teamA}`),
    });
    await alice.request({ method: 'POST', path: `${RBAC}/namespaces/${teamA}/roles`, body: { metadata: { name: 'gate-writes' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['update', 'patch'] }] } });
    await alice.request({
      method: 'POST',
      path: `${RBAC}/namespaces/${teamA}/rolebindings`,
      body: { metadata: { name: 'gate-writes' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gate-writes' }, subjects: [{ kind: 'ServiceAccount', name: 'gate' }] },
    });
    // The gateway watches RBAC: the grant is picked up without the periodic review (an hour here).
    await eventually('label-configmaps registered', async () => (await condition(teamA, 'label-configmaps'))?.status === 'True', 60_000);
    // And so is the revocation: the hook is unregistered, it no longer changes configmaps.
    await alice.request({ method: 'DELETE', path: `${RBAC}/namespaces/${teamA}/rolebindings/gate-writes` });
    const refused = async () => {
      const ready = await condition(teamA, 'label-configmaps');
      return ready?.status === 'False' ? ready : undefined;
    };
    expect(await eventually('label-configmaps Forbidden again', refused, 60_000)).toMatchObject({
      reason: 'Forbidden',
      message: expect.stringContaining(`ServiceAccount ${teamA}/gate may not update configmaps in namespace ${teamA}`),
    });
  });
});

describe("a namespace admin's hook that never answers", () => {
  it('may not wait 30 s, holds no ReplicaSet of its namespace or another, and its breaker opens after 3 failures', async () => {
    expect(await policyRefusal({ timeoutSeconds: 30 })).toContain('spec.timeoutSeconds: a namespaced AdmissionHook waits at most 3 s');
    await alice.request({ method: 'POST', path: hooksIn(teamA), body: hookBody('stall', { rules: rule([''], ['pods'], ['CREATE']), failurePolicy: 'Fail', function: { url: stallUrl } }) });
    await eventually('stall registered', async () => (await condition(teamA, 'stall'))?.status === 'True');
    const pod = { metadata: { name: 'probe' }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } };
    // Team a's own pods wait for it (each times out, within the cap): that is what it asked for.
    await eventually('stall in effect', async () => (await refusalOf(alice, `/api/v1/namespaces/${teamA}/pods`, pod))?.includes('admission hook'), 60_000);
    // ReplicaSets in both teams: the controller's pod creations never reach team a's hook.
    const names = Array.from({ length: 8 }, (_, i) => `rs-${i}`);
    for (const name of names) await alice.request({ method: 'POST', path: `/apis/apps/v1/namespaces/${teamA}/replicasets`, body: replicaSet(name) });
    await bob.request({ method: 'POST', path: `/apis/apps/v1/namespaces/${teamB}/replicasets`, body: replicaSet('rs-b') });
    await eventually("team b's pod", async () => (await podsOf(teamB, 'rs-b')) === 1, 60_000);
    for (const name of names) await eventually(`team a's pod of ${name}`, async () => (await podsOf(teamA, name)) === 1, 60_000);
    expect(stallUsers.filter((user) => user.startsWith('system:serviceaccount:kube-system:') || user === 'system:kube-controller-manager')).toEqual([]);
    // Three failed calls open the breaker: said on the hook, and team a's requests are answered at once.
    await eventually('the breaker open', async () => (await refusalOf(alice, `/api/v1/namespaces/${teamA}/pods`, pod))?.includes('was not called: its last 3 calls failed'), 60_000);
    expect(await eventually('CircuitOpen reported', () => condition(teamA, 'stall', 'CircuitOpen'))).toMatchObject({ status: 'True', reason: 'ConsecutiveFailures', message: expect.stringContaining('answered by failurePolicy Fail without calling it') });
  });
});

describe('the hooks a namespace admin may have served', () => {
  it('are the 3 oldest (--tenant-max-hooks=3); the next is TenantLimitExceeded until one goes', async () => {
    for (const name of ['h1', 'h2', 'h3', 'h4']) await bob.request({ method: 'POST', path: hooksIn(teamB), body: { ...hookBody(name, {}), metadata: { name, labels: { [HOOK_SUITE_LABEL]: suite.namespace } } } });
    for (const name of ['h1', 'h2', 'h3']) await eventually(`${name} registered`, async () => (await condition(teamB, name))?.status === 'True');
    expect(await eventually('h4 left out', () => condition(teamB, 'h4'))).toMatchObject({ status: 'False', reason: 'TenantLimitExceeded', message: expect.stringContaining(`namespace ${teamB} has 4 AdmissionHooks`) });
    await bob.request({ method: 'DELETE', path: `${hooksIn(teamB)}/h2` });
    await eventually('h4 registered', async () => (await condition(teamB, 'h4'))?.status === 'True');
  });
});

describe("the gateway's webhook configurations", () => {
  // The gateway runs with --access-review-seconds=3600: only its watch of the configurations brings these back in time.
  it('are written back within seconds when someone else edits or deletes one', async () => {
    // Team b's hooks of the test above make way (--tenant-max-hooks=3): this one is served whatever ran before.
    await client.request({ method: 'DELETE', path: hooksIn(teamB) });
    await bob.request({ method: 'POST', path: hooksIn(teamB), body: hookBody('drift', {}) });
    await eventually('drift registered', async () => (await condition(teamB, 'drift'))?.status === 'True');
    const name = `kubeloop-admission-hooks-${suite.namespace}`;
    const validating = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
    type Configuration = { metadata: { name: string }; webhooks?: Array<{ name: string; timeoutSeconds?: number }> };
    const path = `${validating}/${tenantConfigurationName(name, tenantBucket(teamB, DEFAULT_TENANT_CONFIGURATIONS))}`;
    const read = () => client.getIfExists<Configuration>({ path });
    const before = await eventually("team b's configuration", async () => ((await read())?.webhooks?.length ? read() : undefined));
    const timeout = before.webhooks?.[0]?.timeoutSeconds;
    await client.request({ method: 'PATCH', path, contentType: 'application/json-patch+json', body: [{ op: 'replace', path: '/webhooks/0/timeoutSeconds', value: 30 }] });
    await eventually('the edit written back', async () => (await read())?.webhooks?.[0]?.timeoutSeconds === timeout, 30_000);
    await client.request({ method: 'DELETE', path });
    const again = await eventually('the configuration written again', async () => ((await read())?.webhooks?.length ? read() : undefined), 30_000);
    expect(again?.webhooks?.map((w) => w.name)).toEqual(before.webhooks?.map((w) => w.name));
  });
});

// The residual docs/security.md states: with no identity excluded, how long team b's ReplicaSet waits for its pod
// while team a's hook never answers and 8 ReplicaSets of team a keep the controller's workers busy. A figure,
// not a check: KUBELOOP_MEASURE_RESIDUAL=1 npx vitest run --project e2e test/e2e/tenant-hook-rules.test.ts
describe.runIf(process.env.KUBELOOP_MEASURE_RESIDUAL === '1')('the residual (measured, not asserted)', () => {
  it('prints how long team b waits with no identity excluded, within the cap and the breaker', async () => {
    await under.webhook.stop({ unregister: true });
    under = await startWebhookFor(suite, [`--only-namespace=${teamB}`, '--hook-exclude-identities=']);
    await alice.request({ method: 'POST', path: hooksIn(teamA), body: hookBody('stall-all', { rules: rule([''], ['pods'], ['CREATE']), failurePolicy: 'Fail', function: { url: stallUrl } }) });
    await eventually('stall-all registered', async () => (await condition(teamA, 'stall-all'))?.status === 'True');
    for (const name of Array.from({ length: 8 }, (_, i) => `late-${i}`)) await alice.request({ method: 'POST', path: `/apis/apps/v1/namespaces/${teamA}/replicasets`, body: replicaSet(name) });
    const start = performance.now();
    await bob.request({ method: 'POST', path: `/apis/apps/v1/namespaces/${teamB}/replicasets`, body: replicaSet('late-b') });
    await eventually("team b's pod", async () => (await podsOf(teamB, 'late-b')) === 1, 120_000);
    console.log(`residual: team b's ReplicaSet got its pod after ${((performance.now() - start) / 1000).toFixed(1)} s; the hook saw ${stallUsers.filter((u) => u.startsWith('system:serviceaccount:kube-system:')).length} requests of kube-system's controllers`);
  });
});
