// An AdmissionHook's shadow through the real API server: a stricter new version that would deny pods
// without a team label runs as the hook's shadow; every pod is still admitted by the live version, and
// the ones the shadow would deny are counted (live allowed, shadow denied) and shown (ShadowDiverged).
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { allow, defineAdmission, deny } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { installCrds } from '../support/router-harness.ts';
import { deleteNamespace, HOOK_SUITE_LABEL, startWebhookFor, type WebhookUnderTest } from './webhook-harness.ts';

let suite: ClusterSuite;
let ns: string;
let custom: CustomObjectsApi;
let client: KubeClient;
let under: WebhookUnderTest;
const functions: ServedFunction[] = [];
const logger = createLogger({ name: 'fn', level: 'silent' });
let hook: string;

// The live version denies only pods labelled forbidden; the new one also every pod without a team label.
const lenient = defineAdmission({ name: 'lenient', type: 'validating', admit: (r) => (r.object?.metadata?.labels?.forbidden ? deny('forbidden') : allow()) });
const strict = defineAdmission({
  name: 'strict',
  type: 'validating',
  admit: (r) => (r.object?.metadata?.labels?.forbidden ? deny('forbidden') : !r.object?.metadata?.labels?.team ? deny(`pod "${r.object?.metadata?.name ?? ''}" needs a "team" label`) : allow()),
});

const HOOKS = { group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusteradmissionhooks' };

beforeAll(async () => {
  suite = await setupClusterSuite('hook-versions');
  ns = suite.namespace;
  custom = suite.kubeConfig.makeApiClient(CustomObjectsApi);
  client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  await installCrds(client, ['clusteradmissionhooks.kubeloop.dev.yaml']);
  for (const definition of [lenient, strict]) functions.push(await serveFunction(definition, { port: 0, host: '127.0.0.1', logger }));
  under = await startWebhookFor(suite);
  hook = `lenient-${ns}`;
  const spec: AdmissionHookSpec = {
    type: 'validating',
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
    failurePolicy: 'Fail',
    serviceAccount: { namespace: ns, name: 'hooks' },
    function: { url: `${functions[0]!.url}/admit`, shadow: { url: `${functions[1]!.url}/admit` } },
  };
  const body: AdmissionHook = { apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterAdmissionHook', metadata: { name: hook, labels: { [HOOK_SUITE_LABEL]: ns } }, spec };
  await custom.createClusterCustomObject({ ...HOOKS, body });
  await eventually('the hook Ready', async () => (await conditionOf('Ready'))?.status === 'True');
});

afterAll(async () => {
  if (hook) await custom.deleteClusterCustomObject({ ...HOOKS, name: hook }).catch(() => undefined);
  if (under) {
    await under.webhook.stop({ unregister: true });
    await deleteNamespace(suite, under.certNamespace);
  }
  await Promise.all(functions.map((f) => f.close()));
  await client?.close();
  await suite?.cleanup();
});

async function conditionOf(type: string): Promise<{ status?: string; reason?: string; message?: string } | undefined> {
  const object = (await custom.getClusterCustomObject({ ...HOOKS, name: hook })) as AdmissionHook;
  return object.status?.conditions?.find((c) => c.type === type);
}

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const text = await under.webhook.server.metrics.getSingleMetricAsString(name);
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && want.every((w) => l.includes(w)))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

const pod = (name: string, labels: Record<string, string>): V1Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } });

describe('a shadow admission function', () => {
  it('never denies: the pods it would deny are admitted by the live version, counted and shown', async () => {
    // The hook takes effect when its webhook is registered: wait until the live version denies a forbidden pod.
    await eventually('the live version enforcing', async () => {
      const refused = await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: pod(`probe-${Date.now()}`, { forbidden: 'yes', team: 'x' }) }).then(() => false, () => true);
      return refused;
    });
    for (const [name, labels] of [['no-team-1', {}], ['no-team-2', {}], ['with-team', { team: 'shop' }]] as const) {
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, body: pod(name, labels) });
    }
    // Admitted, all three: the shadow's denials were never enforced.
    const list = await client.request<{ items: V1Pod[] }>({ path: `/api/v1/namespaces/${ns}/pods` });
    // (Probes admitted before the webhook took effect carry the forbidden label; they are not this test's pods.)
    expect(list.items.filter((p) => !p.metadata?.labels?.forbidden).map((p) => p.metadata?.name).sort()).toEqual(['no-team-1', 'no-team-2', 'with-team']);

    // The shadow is called beside the live version, off the admission path: its three calls end in any order,
    // so all three are waited for before any count is held to its value.
    const counted = async () => ({
      denied: await metric('kubeloop_admission_shadow_decisions_total', { hook, live: 'allowed', shadow: 'denied' }),
      allowed: await metric('kubeloop_admission_shadow_decisions_total', { hook, live: 'allowed', shadow: 'allowed' }),
    });
    await eventually('the shadow\'s three calls counted', async () => {
      const { denied, allowed } = await counted();
      return denied + allowed >= 3;
    });
    expect(await counted()).toEqual({ denied: 2, allowed: 1 });
    expect(await metric('kubeloop_admission_shadow_calls_total', { hook, result: 'diverged' })).toBe(2);
    const shown = await eventually('ShadowDiverged=True', async () => {
      const c = await conditionOf('ShadowDiverged');
      return c?.status === 'True' && c;
    });
    expect(shown.message).toMatch(new RegExp(`CREATE Pod ${ns}/no-team-[12]`));
    expect(shown.message).toContain('needs a \\"team\\" label');
  });
});
