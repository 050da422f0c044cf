// Namespaced AdmissionHooks through the real API server: a team's hook sees only its namespace's requests
// (counted at the functions; team b's calls signed for hook/<namespace>/<name>), hooks of one shape in several
// namespaces share one webhook entry, and a hook reaching another namespace (ServiceAccount, Service, context)
// is refused with InvalidSpec by the gateway.
import { CoreV1Api, CustomObjectsApi, type V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { allow, defineAdmission, deny } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { deleteNamespace, HOOK_SUITE_LABEL, installWatcherCrd, startWebhookFor, type WebhookUnderTest } from './webhook-harness.ts';
import { tenantConfigurationName } from '../../webhooks/lifecycle/hook-configuration-shards.ts';

let suite: ClusterSuite;
let teamA: string;
let teamB: string;
let admin: KubeClient;
let custom: CustomObjectsApi;
let under: WebhookUnderTest;
/** Each team's function, and the namespaces of the requests it saw. */
const teams: Array<{ fn: ServedFunction; seen: string[] }> = [];
const created: Array<{ namespace: string; name: string }> = [];

/** Denies ConfigMaps labelled forbidden, naming the team whose function answered. */
function teamFunction(team: string, seen: string[]) {
  return defineAdmission({
    name: `gate-${team}`,
    type: 'validating',
    admit: (request) => {
      seen.push(request.namespace ?? '');
      return request.object?.metadata?.labels?.forbidden ? deny(`${team}'s hook says no to ${request.name ?? ''}`) : allow();
    },
  });
}

const configMapRule = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];

async function createHook(namespace: string, name: string, spec: Partial<AdmissionHookSpec>): Promise<void> {
  created.push({ namespace, name });
  // Namespaces omitted are the hook's own (the CRD allows it; the shared TypeScript type asks for them).
  const body = {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'AdmissionHook',
    metadata: { name, labels: { [HOOK_SUITE_LABEL]: suite.namespace } },
    spec: { type: 'validating', rules: configMapRule, serviceAccount: { name: 'gate' }, ...spec },
  };
  await custom.createNamespacedCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', namespace, plural: 'admissionhooks', body });
}

async function ready(namespace: string, name: string) {
  const hook = (await custom.getNamespacedCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', namespace, plural: 'admissionhooks', name })) as AdmissionHook;
  return hook.status?.conditions?.find((c) => c.type === 'Ready' && c.observedGeneration === hook.metadata?.generation);
}

/** Creates a ConfigMap (a dry run); undefined when admitted, the refusal's message otherwise. */
async function createConfigMap(namespace: string, name: string, labels: Record<string, string> = {}): Promise<string | undefined> {
  try {
    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/configmaps`, query: { dryRun: 'All' }, body: { metadata: { name, labels } } });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

beforeAll(async () => {
  suite = await setupClusterSuite('tenant-hooks');
  teamA = `${suite.namespace}-a`;
  teamB = `${suite.namespace}-b`;
  admin = await KubeClient.fromKubeConfig(suite.kubeConfig);
  custom = suite.kubeConfig.makeApiClient(CustomObjectsApi);
  const core = suite.kubeConfig.makeApiClient(CoreV1Api);
  for (const name of [teamA, teamB]) await core.createNamespace({ body: { metadata: { name } } });
  await installWatcherCrd(suite);
  // Team b signs its calls: its function verifies requests for hook/<team-b>/gate and signs its replies.
  const secret = generateSigningSecret();
  await core.createNamespacedSecret({ namespace: teamB, body: { metadata: { name: 'gate-signing' }, stringData: { secret } } });
  for (const team of ['a', 'b']) {
    const seen: string[] = [];
    const options = { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'fn', level: 'silent' }), ...(team === 'b' ? { signingSecret: secret } : {}) };
    teams.push({ fn: await serveFunction(teamFunction(team, seen), options), seen });
  }
  under = await startWebhookFor(suite, [`--only-namespace=${teamA}`, `--only-namespace=${teamB}`, '--tenant-configurations=1']);
  await createHook(teamA, 'gate', { function: { url: `${teams[0]!.fn.url}/admit` } });
  await createHook(teamB, 'gate', { function: { url: `${teams[1]!.fn.url}/admit`, signingSecretRef: { name: 'gate-signing', key: 'secret' } as { name: string; namespace: string; key: string } } });
});

afterAll(async () => {
  for (const { namespace, name } of created) await custom?.deleteNamespacedCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', namespace, plural: 'admissionhooks', name }).catch(() => undefined);
  if (under) {
    await under.webhook.stop({ unregister: true });
    await deleteNamespace(suite, under.certNamespace);
  }
  for (const team of teams) await team.fn.close();
  if (suite) for (const name of [teamA, teamB]) await deleteNamespace(suite, name);
  await admin?.close();
  await suite?.cleanup();
});

describe('a namespaced AdmissionHook', () => {
  it("denies its team's object (team b's over signed calls) and never sees another team's request", async () => {
    await eventually("team a's hook in effect", async () => (await createConfigMap(teamA, 'probe', { forbidden: 'yes' }))?.includes("a's hook says no to probe"));
    await eventually("team b's hook in effect", async () => (await createConfigMap(teamB, 'probe', { forbidden: 'yes' }))?.includes("b's hook says no to probe"));
    expect(await createConfigMap(teamA, 'fine')).toBeUndefined();
    expect(await createConfigMap(teamB, 'fine')).toBeUndefined();
    // The suite's own namespace is sent to the gateway too, but holds no hook: admitted, no function called.
    expect(await createConfigMap(suite.namespace, 'elsewhere', { forbidden: 'yes' })).toBeUndefined();
    const [a, b] = teams;
    expect(a!.seen.length).toBeGreaterThan(1);
    expect(b!.seen.length).toBeGreaterThan(1);
    expect(new Set(a!.seen)).toEqual(new Set([teamA]));
    expect(new Set(b!.seen)).toEqual(new Set([teamB]));
  });

  it('shares one webhook entry with the hooks of the same shape in other namespaces', async () => {
    // Outside the cluster hooks' configuration, in the tenants' (one bucket with --tenant-configurations=1).
    const configuration = await admin.request<V1ValidatingWebhookConfiguration>({ path: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${tenantConfigurationName(`kubeloop-admission-hooks-${suite.namespace}`, 0)}` });
    const entries = (configuration.webhooks ?? []).filter((webhook) => webhook.name.endsWith('.namespaced.hooks.kubeloop.dev'));
    expect(entries).toHaveLength(1);
    const names = entries[0]!.namespaceSelector?.matchExpressions?.find((e) => e.operator === 'In' && e.values?.includes(teamA));
    expect(names?.values).toEqual([teamA, teamB]);
    const path = entries[0]!.clientConfig.url ? new URL(entries[0]!.clientConfig.url).pathname : '';
    expect(path).toMatch(/^\/admit-namespaced\/v-[0-9a-f]{12}-0-t0$/);
    for (const namespace of [teamA, teamB]) expect(await ready(namespace, 'gate')).toMatchObject({ status: 'True', reason: 'Registered', message: expect.stringContaining(path) });
  });

  it("is refused when it names another namespace's ServiceAccount, Service or context, or a cluster-scoped context kind", async () => {
    const url = { url: `${teams[0]!.fn.url}/admit` };
    const cases: Array<[string, Partial<AdmissionHookSpec>, string]> = [
      ['other-sa', { function: url, serviceAccount: { namespace: teamB, name: 'gate' } }, `serviceAccount: namespace "${teamB}" is not the hook's own (${teamA})`],
      ['other-service', { function: { service: { name: 'fn', namespace: teamB, port: 8080 } } }, `function.service: namespace "${teamB}" is not the hook's own`],
      ['other-context', { function: url, context: [{ name: 'cfg', apiVersion: 'v1', kind: 'ConfigMap', objectName: { value: 'x' }, namespace: teamB }] }, `context "cfg": namespace "${teamB}" is not the hook's own`],
      ['cluster-context', { function: url, context: [{ name: 'ns', apiVersion: 'v1', kind: 'Namespace', objectName: { value: teamA } }] }, 'context "ns": Namespace (v1) is cluster-scoped'],
    ];
    for (const [name, spec] of cases) await createHook(teamA, name, spec);
    for (const [name, , message] of cases) {
      const condition = await eventually(`${name} reported`, () => ready(teamA, name));
      expect(condition, name).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: expect.stringContaining(message) });
    }
  });
});
