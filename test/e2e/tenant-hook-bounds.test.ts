// Issue 38, attacked as alice, a user bound only to the built-in admin role in team a (the chart's tenant roles
// give admin AdmissionHooks), against one gateway on the real control plane. The gateway runs as an identity of
// its own that may read core kinds but nothing of batch, so a team's context grant is what lets it cache a
// team's CronJobs. What each attack did before, and what now holds:
// - a context request bomb (8 context ConfigMaps of 900 kB, 24 concurrent creates) grew the gateway by the
//   requests it built; now the lookup stops at --max-context-bytes and the failurePolicy answers, and a tenant's
//   large requests beyond its share of the in-flight byte budget are answered the same while team b is served;
// - hooks too large for the shared configuration, or enough of them to overfill it: now InvalidSpec for the
//   offending team's hooks only, tenant hooks kept out of the cluster hooks' configuration, no rewrite when
//   nothing changed, and a tenant configuration deleted with its last hook;
// - a hook whose context cache cannot sync held every other team's registration; a tenant hook on kubeloop.dev;
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { isApiError, KubeClient } from '../../lib/kube/kube-client.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { readWebhookConfig } from '../../webhooks/config.ts';
import { tenantConfigurationName } from '../../webhooks/lifecycle/hook-configuration-shards.ts';
import { startWebhook, type RunningWebhook } from '../../webhooks/run-webhook.ts';
import { eventually } from '../cluster/eventually.ts';
import { namespaceAdmin, refusalOf } from './tenant-admin.ts';
import { certificateKubeConfig, installTenantRoles } from './tenant-kit.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { renderChart } from './chart-render.ts';
import { deleteNamespace, devWebhookFor, HOOK_SUITE_LABEL, installWatcherCrd } from './webhook-harness.ts';
import { closeFunctions, createConfigMap, gate, never, seenContext, serve, stamp, unstamp } from './tenant-hook-bounds-harness.ts';

const MiB = 1024 * 1024;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const HOOKS = '/apis/kubeloop.dev/v1alpha1';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
let suite: ClusterSuite;
let teamA: string;
let teamB: string;
let root: KubeClient;
let alice: KubeClient;
let gatewayUser: string;
let gateway: RunningWebhook;
let certNamespace: string;
let configurationName: string;
const clusterRoles: string[] = [];
let gateUrl: string;
let neverUrl: string;

const configMapRule = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
const only = (test: string) => ({ matchLabels: { test } });

function hookBody(name: string, spec: Partial<AdmissionHookSpec>): AdmissionHook {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'AdmissionHook',
    metadata: { name, labels: { [HOOK_SUITE_LABEL]: suite.namespace } },
    spec: { type: 'validating', rules: configMapRule, serviceAccount: { name: 'gate' } as AdmissionHookSpec['serviceAccount'], function: { url: gateUrl }, ...spec },
  } as AdmissionHook;
}

const createHook = (client: KubeClient, namespace: string, body: AdmissionHook) => client.request({ method: 'POST', path: `${HOOKS}/namespaces/${namespace}/admissionhooks`, body });
const deleteHook = (namespace: string, name: string) => root.request({ method: 'DELETE', path: `${HOOKS}/namespaces/${namespace}/admissionhooks/${name}` }).catch(() => undefined);

async function condition(namespace: string, name: string, type = 'Ready') {
  const hook = await root.request<AdmissionHook>({ path: `${HOOKS}/namespaces/${namespace}/admissionhooks/${name}` });
  return hook.status?.conditions?.find((c) => c.type === type && (type !== 'Ready' || c.observedGeneration === hook.metadata?.generation));
}
const reason = (namespace: string, name: string, wanted: string, type = 'Ready') =>
  eventually(`${namespace}/${name} ${type} ${wanted}`, async () => {
    const found = await condition(namespace, name, type);
    return found?.reason === wanted ? found : undefined;
  }, 90_000);

/** Alice lets the gateway read `resource` in team a: the grant docs/tenants.md describes. */
async function grantGateway(resource: string, group: string): Promise<void> {
  const name = `kubeloop-gateway-${resource}`;
  await alice.request({ method: 'POST', path: `${RBAC}/namespaces/${teamA}/roles`, body: { metadata: { name }, rules: [{ apiGroups: [group], resources: [resource], verbs: ['get', 'list', 'watch'] }] } });
  await alice.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${teamA}/rolebindings`,
    body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [{ kind: 'User', name: gatewayUser, apiGroup: 'rbac.authorization.k8s.io' }] },
  });
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${gateway.opsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(name))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

beforeAll(async () => {
  suite = await setupClusterSuite('tenant-hook-bounds');
  teamA = `${suite.namespace}-a`;
  teamB = `${suite.namespace}-b`;
  gatewayUser = `kubeloop-gateway-${suite.namespace}`;
  root = await KubeClient.fromKubeConfig(suite.kubeConfig);
  for (const name of [teamA, teamB]) await root.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name } } });
  await installWatcherCrd(suite);
  // The chart's tenant roles as rendered (renamed for this suite): admin gets AdmissionHooks.
  clusterRoles.push(...(await installTenantRoles(root, (await renderChart(suite.binaries.helm, { namespace: suite.namespace })).manifests, suite.namespace)));
  // The gateway's identity: everything it needs, and nothing of batch (CronJobs come only from a team's grant).
  clusterRoles.push(gatewayUser);
  await root.request({
    method: 'POST',
    path: `${RBAC}/clusterroles`,
    body: { metadata: { name: gatewayUser }, rules: [{ apiGroups: ['', 'admissionregistration.k8s.io', 'kubeloop.dev', 'authorization.k8s.io', 'discovery.k8s.io'], resources: ['*'], verbs: ['*'] }] },
  });
  await root.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: { metadata: { name: gatewayUser }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: gatewayUser }, subjects: [{ kind: 'User', name: gatewayUser, apiGroup: 'rbac.authorization.k8s.io' }] },
  });
  alice = await namespaceAdmin(root, teamA, `alice-${teamA}`);
  // The API server's RBAC cache honours the fresh RoleBinding a moment later.
  await eventually('alice may create ServiceAccounts', async () => (await refusalOf(alice, `/api/v1/namespaces/${teamA}/serviceaccounts`, { metadata: { name: 'gate' } })) === undefined);
  // Team a's hooks run as ServiceAccount gate, which may get what the hooks read as context, and update and
  // patch ConfigMaps (what a namespaced mutating hook may match, tenant-hook-rules.test.ts).
  await alice.request({ method: 'POST', path: `/api/v1/namespaces/${teamA}/serviceaccounts`, body: { metadata: { name: 'gate' } } });
  await alice.request({ method: 'POST', path: `${RBAC}/namespaces/${teamA}/roles`, body: { metadata: { name: 'gate' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'update', 'patch'] }, { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get'] }] } });
  await alice.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${teamA}/rolebindings`,
    body: { metadata: { name: 'gate' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gate' }, subjects: [{ kind: 'ServiceAccount', name: 'gate', namespace: teamA }] },
  });
  gateUrl = await serve(gate);
  neverUrl = await never();
  // The gateway, in this process, as its own user.
  const kubeConfig = await certificateKubeConfig(suite.server, gatewayUser);
  const dev = devWebhookFor(suite);
  certNamespace = dev.certNamespace;
  configurationName = `kubeloop-admission-hooks-${suite.namespace}`;
  const config = readWebhookConfig(
    [...dev.args, `--only-namespace=${teamA}`, `--only-namespace=${teamB}`, '--tenant-configurations=1', `--max-configuration-bytes=${32 * 1024}`, '--max-hook-entry-bytes=8192', `--max-in-flight-request-bytes=${8 * MiB}`],
    {},
  );
  gateway = await startWebhook(config, { kubeConfig, logger: createLogger({ name: 'webhook', level: 'silent' }) });
  // A ClusterAdmissionHook of the cluster admin stamps team a's ConfigMaps labelled test=order.
  await root.request({
    method: 'POST',
    path: `${HOOKS}/clusteradmissionhooks`,
    body: {
      apiVersion: 'kubeloop.dev/v1alpha1',
      kind: 'ClusterAdmissionHook',
      metadata: { name: `stamp-${suite.namespace}`, labels: { [HOOK_SUITE_LABEL]: suite.namespace } },
      spec: { type: 'mutating', rules: configMapRule, objectSelector: only('order'), serviceAccount: { namespace: suite.namespace, name: 'default' }, function: { url: await serve(stamp) } },
    },
  });
}, 180_000);


afterAll(async () => {
  for (const namespace of [teamA, teamB]) await root?.request({ method: 'DELETE', path: `${HOOKS}/namespaces/${namespace}/admissionhooks` }).catch(() => undefined);
  await root?.request({ method: 'DELETE', path: `${HOOKS}/clusteradmissionhooks/stamp-${suite?.namespace}` }).catch(() => undefined);
  await gateway?.stop({ unregister: true });
  await closeFunctions();
  for (const name of clusterRoles) await root?.request({ method: 'DELETE', path: `${RBAC}/clusterroles/${name}` }).catch(() => undefined);
  await root?.request({ method: 'DELETE', path: `${RBAC}/clusterrolebindings/${gatewayUser}` }).catch(() => undefined);
  if (suite) for (const name of [teamA, teamB, certNamespace]) await deleteNamespace(suite, name);
  await root?.close();
  await suite?.cleanup();
});


describe("a team's hooks against the gateway's bounds", () => {
  it('cannot intercept kubeloop.dev resources (its hooks or their status)', async () => {
    await createHook(alice, teamA, hookBody('on-hooks', { rules: [{ operations: ['UPDATE'], apiGroups: ['kubeloop.dev'], apiVersions: ['*'], resources: ['admissionhooks/status'] }] }));
    expect((await reason(teamA, 'on-hooks', 'InvalidSpec')).message).toContain('apiGroup "kubeloop.dev" reaches kubeloop\'s own resources');
  });

  it("a hook whose context cannot be cached does not hold team b's registration; a grant in team a is all the gateway needs", async () => {
    await createHook(alice, teamA, hookBody('cron', { objectSelector: only('cron'), context: [{ name: 'job', apiVersion: 'batch/v1', kind: 'CronJob', objectName: { value: 'nightly' } }] }));
    await root.request({ method: 'POST', path: `/apis/batch/v1/namespaces/${teamB}/cronjobs`, body: { metadata: { name: 'nightly' }, spec: { schedule: '0 0 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } } });
    await createHook(root, teamB, hookBody('late', { objectSelector: only('team-b'), serviceAccount: { name: 'default' } as AdmissionHookSpec['serviceAccount'] }));
    await reason(teamB, 'late', 'Registered');
    // Team b is registered while team a's cache still cannot list: team a's hook is served, by its failure
    // policy, and says why (before, team b waited for that cache's 30 s sync timeout and team a was left out).
    const pending = await eventually('team a pending, with the list error', async () => {
      const found = await condition(teamA, 'cron');
      return found?.reason === 'ContextPending' && /cronjobs in namespace .* has not synced: .*forbidden/.test(found.message ?? '') ? found : undefined;
    }, 60_000);
    expect(pending.status).toBe('False');
    expect((await createConfigMap(alice, teamA, 'cron')).refused).toMatch(/has not synced.*failurePolicy Fail/);
    // Team a grants the gateway CronJobs in its namespace, no ClusterRole: the hook gets its context.
    await alice.request({ method: 'POST', path: `/apis/batch/v1/namespaces/${teamA}/cronjobs`, body: { metadata: { name: 'nightly', labels: { team: 'a' } }, spec: { schedule: '0 0 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } } } } });
    await grantGateway('cronjobs', 'batch');
    await reason(teamA, 'cron', 'Registered');
    await eventually('the CronJob sent as context', async () => (await createConfigMap(alice, teamA, 'cron')).refused === undefined && seenContext.has('cron'));
    expect(seenContext.get('cron')).toMatchObject({ job: { metadata: { name: 'nightly', namespace: teamA, labels: { team: 'a' } } } });
  });

  it("runs team a's mutation before a ClusterAdmissionHook's, so it cannot undo it", async () => {
    await createHook(alice, teamA, hookBody('unstamp', { type: 'mutating', objectSelector: only('order'), function: { url: await serve(unstamp) } }));
    await reason(teamA, 'unstamp', 'Registered');
    const labels = await eventually('both mutations applied', async () => {
      const { labels: got } = await createConfigMap(alice, teamA, 'order');
      return got?.touched === 'by-tenant' ? got : undefined;
    });
    expect(labels.stamped).toBe('by-cluster');
  });

  it('answers a context bomb by the failure policy without building it, and keeps team a within its share of request bytes', async () => {
    // Eight ConfigMaps of 900 kB in team a, which the gateway caches (team a grants it ConfigMaps).
    await grantGateway('configmaps', '');
    for (let i = 0; i < 8; i += 1) await createConfigMap(alice, teamA, `ballast-${i}`, { blob: 'x'.repeat(900_000) }, false);
    const ballast = (await root.request<{ items: Array<{ metadata: { name: string } }> }>({ path: `/api/v1/namespaces/${teamA}/configmaps`, query: { labelSelector: 'test in (ballast-0,ballast-1,ballast-2,ballast-3,ballast-4,ballast-5,ballast-6,ballast-7)' } })).items;
    expect(ballast).toHaveLength(8);
    const context = ballast.map((item, i) => ({ name: `c${i}`, apiVersion: 'v1', kind: 'ConfigMap', objectName: { value: item.metadata.name } }));
    await createHook(alice, teamA, hookBody('bomb', { objectSelector: only('bomb'), timeoutSeconds: 3, function: { url: neverUrl }, context }));
    await createHook(alice, teamA, hookBody('heavy', { objectSelector: only('heavy'), timeoutSeconds: 3, function: { url: neverUrl }, context: context.slice(0, 1) }));
    await reason(teamA, 'bomb', 'Registered');
    await reason(teamA, 'heavy', 'Registered');
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
    const bombs = await Promise.all(Array.from({ length: 24 }, () => createConfigMap(alice, teamA, 'bomb')));
    clearInterval(sampler);
    // The gateway's heap (this process) stayed far below the chart's 256 Mi limit: nothing of 24 x 7.2 MB was built.
    expect(peak - baseline, `heap growth ${((peak - baseline) / MiB).toFixed(1)} MiB`).toBeLessThan(64 * MiB);
    for (const bomb of bombs) expect(bomb.refused).toMatch(/take more than 1048576 bytes \(--max-context-bytes\).*failurePolicy Fail/);
    expect(await reason(teamA, 'bomb', 'ContextTooLarge', 'ContextBounded')).toMatchObject({ status: 'False' });
    expect(await metric('kubeloop_admission_requests_over_bounds_total{reason="ContextTooLarge"}')).toBeGreaterThanOrEqual(24);
    // 0.9 MB requests that never get an answer: team a holds at most its share of the 8 MiB; the rest are
    // answered at once by the failure policy, and team b's hook is still called meanwhile.
    const heavy = Promise.all(Array.from({ length: 12 }, () => createConfigMap(alice, teamA, 'heavy')));
    const throttled = await eventually('team a over its byte share', async () => ((await metric('kubeloop_admission_requests_over_bounds_total{reason="Throttled"}')) >= 6 ? true : undefined));
    expect(throttled).toBe(true);
    expect((await createConfigMap(root, teamB, 'team-b')).refused).toBeUndefined();
    const answers = await heavy;
    const overShare = answers.filter((a) => /over its share of the gateway's in-flight request bytes/.test(a.refused ?? ''));
    expect(overShare.length).toBeGreaterThanOrEqual(6);
    expect(answers.every((a) => a.refused !== undefined)).toBe(true);
    for (const name of ['bomb', 'heavy']) await deleteHook(teamA, name);
  }, 180_000);

  it("keeps tenant hooks out of the cluster hooks' configuration, bounds each hook and each tenant configuration, and writes nothing unchanged", async () => {
    const tenants = tenantConfigurationName(configurationName, 0);
    const cluster = await root.request<{ webhooks?: Array<{ name: string }> }>({ path: `${ADMISSION}/mutatingwebhookconfigurations/${configurationName}` });
    expect(cluster.webhooks?.map((w) => w.name)).toEqual([`stamp-${suite.namespace}.hooks.kubeloop.dev`]);
    const tenant = await root.request<{ webhooks?: Array<{ name: string }> }>({ path: `${ADMISSION}/validatingwebhookconfigurations/${tenants}` });
    expect(tenant.webhooks?.every((w) => w.name.endsWith('.namespaced.hooks.kubeloop.dev'))).toBe(true);
    // One hook of more than --max-hook-entry-bytes (8 KiB here) of rules: InvalidSpec.
    const resources = (n: number, width: number) => Array.from({ length: n }, (_, i) => `r${i}${'x'.repeat(width)}`);
    await createHook(alice, teamA, hookBody('huge', { rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: resources(16, 240) }, { operations: ['CREATE'], apiGroups: ['example.org'], apiVersions: ['v1'], resources: resources(16, 240) }, { operations: ['CREATE'], apiGroups: ['example.net'], apiVersions: ['v1'], resources: resources(16, 240) }] }));
    expect((await reason(teamA, 'huge', 'InvalidSpec')).message).toContain('--max-hook-entry-bytes');
    // Enough hooks under that bound to overfill the tenants' 32 KiB: team a's largest are left out, nobody else's.
    for (let i = 0; i < 4; i += 1) {
      await createHook(alice, teamA, hookBody(`bulky-${i}`, { rules: [{ operations: ['CREATE'], apiGroups: [`bulky${i}.example.com`], apiVersions: ['v1'], resources: resources(16, 200 + i) }, { operations: ['CREATE'], apiGroups: [`bulky${i}.example.org`], apiVersions: ['v1'], resources: resources(12, 200) }] }));
    }
    const verdicts = await eventually('every bulky hook judged', async () => {
      const all = await Promise.all([0, 1, 2, 3].map((i) => condition(teamA, `bulky-${i}`)));
      return all.every((c) => c !== undefined) ? all : undefined;
    }, 90_000);
    const leftOut = verdicts.filter((c) => c?.reason === 'InvalidSpec');
    expect(leftOut.length).toBeGreaterThanOrEqual(1);
    expect(leftOut[0]?.message).toMatch(new RegExp(`over the 32768 bytes one configuration may hold .*namespace ${teamA}'s hooks take`));
    expect(await condition(teamB, 'late')).toMatchObject({ reason: 'Registered' });
    expect((await root.request<AdmissionHook>({ path: `${HOOKS}/clusteradmissionhooks/stamp-${suite.namespace}` })).status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ reason: 'Registered' });
    for (const type of ['mutating', 'validating']) {
      const written = await root.request<unknown>({ path: `${ADMISSION}/${type}webhookconfigurations/${tenants}` });
      expect(Buffer.byteLength(JSON.stringify(written))).toBeLessThan(40 * 1024);
    }
    // Nothing changed: a reconcile writes nothing.
    await gateway.hooks.schedule();
    const applied = await metric('kubeloop_admission_configuration_writes_total{type="validating",result="applied"}');
    await gateway.hooks.schedule();
    await gateway.hooks.schedule();
    expect(await metric('kubeloop_admission_configuration_writes_total{type="validating",result="applied"}')).toBe(applied);
    expect(await metric('kubeloop_admission_configuration_writes_total{type="validating",result="unchanged"}')).toBeGreaterThan(0);
  }, 240_000);

  it('deletes a tenant configuration once no hook needs it', async () => {
    const tenants = tenantConfigurationName(configurationName, 0);
    for (const namespace of [teamA, teamB]) await root.request({ method: 'DELETE', path: `${HOOKS}/namespaces/${namespace}/admissionhooks` });
    await eventually('the tenant configurations deleted', async () => {
      for (const type of ['mutating', 'validating']) {
        try {
          await root.request({ path: `${ADMISSION}/${type}webhookconfigurations/${tenants}` });
          return undefined;
        } catch (error) {
          if (!isApiError(error, 404)) throw error;
        }
      }
      return true;
    }, 60_000);
  });
});
