// AdmissionHooks attacked as the Loops are: the chart's hook policy (as rendered, bound to this suite's probes)
// refuses metadata, loopback and API-server URLs, sensitive rules and a ServiceAccount the author may not
// impersonate; the gateway sends no Secret a hook's ServiceAccount may not get, leaves a hook whose CEL does not
// compile out while another keeps working, denies (even under Ignore) an object nested past what functions take,
// and never caches a context object over the value budget (sent as null, counted).
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdmissionHook, AdmissionHookSpec } from '../../api/admission-hook.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { allow, defineAdmission, deny, type AdmissionRequest } from '../../lib/sdk/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { byKind, renderChart, type Manifest } from './chart-render.ts';
import { deleteNamespace, HOOK_SUITE_LABEL, installWatcherCrd, startWebhookFor, type WebhookUnderTest } from './webhook-harness.ts';

let suite: ClusterSuite;
let ns: string;
let admin: KubeClient;
let author: KubeClient;
let under: WebhookUnderTest;
let fn: ServedFunction;
/** Every AdmissionRequest the function saw. */
const seen: AdmissionRequest[] = [];
const HOOKS = '/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks';
const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const POLICY_LABEL = 'kubeloop.dev/e2e-hook-admission';
const policyName = () => `${ns}-admission-hooks`;
const nestsCrd = () => `nests${ns.replace(/[^a-z0-9]/g, '')}.e2e.kubeloop.dev`;
const hookNames: string[] = [];

// Denies with whatever context it was sent: a Secret that reached it would come back in the message.
const leaky = defineAdmission({
  name: 'leaky',
  type: 'validating',
  admit: (request) => {
    seen.push(request);
    const secret = request.context?.secret;
    return secret ? deny(`got secret ${JSON.stringify(secret.data ?? {})}`) : allow();
  },
});

const podRule = [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' as const }];

function hookBody(name: string, spec: Partial<AdmissionHookSpec>, labels: Record<string, string> = { [HOOK_SUITE_LABEL]: ns }): AdmissionHook {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'ClusterAdmissionHook',
    metadata: { name, labels },
    spec: { type: 'validating', rules: podRule, function: { url: `${fn.url}/admit` }, serviceAccount: { namespace: ns, name: 'hook-reader' }, ...spec },
  };
}

async function createHook(client: KubeClient, body: AdmissionHook): Promise<void> {
  hookNames.push(body.metadata!.name!);
  await client.request({ method: 'POST', path: HOOKS, body });
}

/** Creates the hook as a dry run; resolves to undefined when admitted, to the refusal's message otherwise. */
async function admit(body: AdmissionHook, client: KubeClient = admin, path = HOOKS): Promise<string | undefined> {
  try {
    await client.request({ method: 'POST', path, query: { dryRun: 'All' }, body });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const ready = async (name: string) => (await admin.request<AdmissionHook>({ path: `${HOOKS}/${name}` })).status?.conditions?.find((c) => c.type === 'Ready');

async function tokenClient(serviceAccount: string): Promise<KubeClient> {
  const token = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/serviceaccounts/${serviceAccount}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const cluster = suite.kubeConfig.getCurrentCluster();
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: cluster?.server ?? '', caData: cluster?.caData, caFile: cluster?.caFile }],
    users: [{ name: serviceAccount, token: token.status.token }],
    contexts: [{ name: serviceAccount, cluster: 'local', user: serviceAccount }],
    currentContext: serviceAccount,
  });
  return KubeClient.fromKubeConfig(kc);
}

async function createPod(name: string, extra: Record<string, string> = {}): Promise<string | undefined> {
  try {
    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/pods`, query: { dryRun: 'All' }, body: { metadata: { name, labels: extra }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } } });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

beforeAll(async () => {
  suite = await setupClusterSuite('hook-admission');
  ns = suite.namespace;
  admin = await KubeClient.fromKubeConfig(suite.kubeConfig);
  await installWatcherCrd(suite);
  fn = await serveFunction(leaky, { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'fn', level: 'silent' }) });
  const { manifests } = await renderChart(suite.binaries.helm, { namespace: ns });
  const ofHooks = (m: Manifest) => m.metadata.name.endsWith('-admission-hooks');
  const policy = byKind(manifests, 'ValidatingAdmissionPolicy').find(ofHooks) as (Manifest & { spec: Record<string, unknown> }) | undefined;
  const binding = byKind(manifests, 'ValidatingAdmissionPolicyBinding').find(ofHooks) as (Manifest & { spec: Record<string, unknown> }) | undefined;
  if (!policy || !binding) throw new Error('the chart renders no ValidatingAdmissionPolicy and binding for AdmissionHooks');
  // Bound to this suite's probes only: the suite's working hooks call functions on 127.0.0.1, as dev mode does.
  await admin.request({ method: 'POST', path: `${ADMISSION}/validatingadmissionpolicies`, body: { ...policy, metadata: { name: policyName() } } });
  await admin.request({
    method: 'POST',
    path: `${ADMISSION}/validatingadmissionpolicybindings`,
    body: { ...binding, metadata: { name: policyName() }, spec: { ...binding.spec, policyName: policyName(), matchResources: { objectSelector: { matchLabels: { [POLICY_LABEL]: ns } } } } },
  });
  // The hook author: may create AdmissionHooks and impersonate hook-reader, which may read no Secrets.
  for (const name of ['author', 'hook-reader']) await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/serviceaccounts`, body: { metadata: { name } } });
  await admin.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { metadata: { name: `${ns}-hook-author` }, rules: [{ apiGroups: ['kubeloop.dev'], resources: ['clusteradmissionhooks'], verbs: ['create', 'get'] }] } });
  await admin.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: { metadata: { name: `${ns}-hook-author` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${ns}-hook-author` }, subjects: [{ kind: 'ServiceAccount', name: 'author', namespace: ns }] },
  });
  await admin.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/roles`, body: { metadata: { name: 'use-hook-reader' }, rules: [{ apiGroups: [''], resources: ['serviceaccounts'], resourceNames: ['hook-reader'], verbs: ['impersonate'] }] } });
  await admin.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/rolebindings`,
    body: { metadata: { name: 'use-hook-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'use-hook-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'author', namespace: ns }] },
  });
  author = await tokenClient('author');
  // hook-reader may get ConfigMaps here (the value-budget case), never Secrets.
  await admin.request({ method: 'POST', path: `${RBAC}/namespaces/${ns}/roles`, body: { metadata: { name: 'hook-reader' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] } });
  await admin.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${ns}/rolebindings`,
    body: { metadata: { name: 'hook-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'hook-reader' }, subjects: [{ kind: 'ServiceAccount', name: 'hook-reader', namespace: ns }] },
  });
  under = await startWebhookFor(suite, ['--max-object-values=1000']);
});

afterAll(async () => {
  for (const name of hookNames) await admin?.request({ method: 'DELETE', path: `${HOOKS}/${name}` }).catch(() => undefined);
  for (const path of [
    `${ADMISSION}/validatingadmissionpolicybindings/${policyName()}`,
    `${ADMISSION}/validatingadmissionpolicies/${policyName()}`,
    `${RBAC}/clusterrolebindings/${ns}-hook-author`,
    `${RBAC}/clusterroles/${ns}-hook-author`,
    `${CRDS}/${nestsCrd()}`,
  ]) {
    await admin?.request({ method: 'DELETE', path }).catch(() => undefined);
  }
  if (under) {
    await under.webhook.stop({ unregister: true });
    await deleteNamespace(suite, under.certNamespace);
  }
  if (suite) await deleteNamespace(suite, `${ns}-secrets`);
  await fn?.close();
  await author?.close();
  await admin?.close();
  await suite?.cleanup();
});

describe('the chart\'s admission policy for AdmissionHooks', () => {
  // Probes call a cluster Service unless the case says otherwise: a policy reports only the first rule broken.
  const probe = (spec: Partial<AdmissionHookSpec>) => hookBody(`probe-${ns}`, { function: { url: `http://fn.${ns}.svc/admit` }, ...spec }, { [POLICY_LABEL]: ns });

  it('type-checks, takes effect and admits a hook at a cluster Service', async () => {
    const status = await eventually('the policy type-checked', async () => {
      const p = await admin.request<{ metadata: { generation: number }; status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: unknown[] } } }>({
        path: `${ADMISSION}/validatingadmissionpolicies/${policyName()}`,
      });
      return p.status?.observedGeneration === p.metadata.generation && p.status;
    });
    expect(status.typeChecking?.expressionWarnings ?? []).toEqual([]);
    await eventually('a metadata URL refused', async () => (await admit(probe({ function: { url: 'http://169.254.169.254/' } })))?.includes(policyName()));
    expect(await admit(probe({ function: { url: `http://fn.${ns}.svc:8080/admit` } }))).toBeUndefined();
    expect(await admit(probe({ function: { service: { name: 'fn', namespace: ns, port: 8080 } } }))).toBeUndefined();
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'is an IP literal'],
    ['http://127.0.0.1:8080/admit', 'is an IP literal'],
    ['http://localhost:8080/admit', 'is loopback'],
    ['https://kubernetes.default.svc/api', 'is the Kubernetes API server'],
    ['https://10.96.0.1/', 'is an IP literal'],
  ])('refuses a hook at %s', async (url, why) => {
    expect(await admit(probe({ function: { url } }))).toContain(why);
  });

  it('refuses rules reaching Secrets, tokens, nodes and RBAC', async () => {
    for (const [groups, resources, why] of [
      [[''], ['secrets'], 'reach secrets'],
      [[''], ['serviceaccounts/token'], 'reach serviceaccounts/token'],
      [['*'], ['*'], 'reach secrets'],
      [['rbac.authorization.k8s.io'], ['clusterrolebindings'], 'reach RBAC'],
    ] as const) {
      const message = await admit(probe({ rules: [{ operations: ['CREATE'], apiGroups: [...groups], apiVersions: ['*'], resources: [...resources] }] }));
      expect(String(message), `${groups.join()} ${resources.join()}`).toContain(why);
    }
  });

  it('lets a hook author name only a ServiceAccount they may impersonate', async () => {
    expect(await admit(probe({ serviceAccount: { namespace: 'kube-system', name: 'generic-garbage-collector' } }), author)).toContain(
      `system:serviceaccount:${ns}:author may not impersonate ServiceAccount kube-system/generic-garbage-collector`,
    );
    expect(await admit(probe({}), author)).toBeUndefined();
  });

  it('refuses a namespaced AdmissionHook that reaches another namespace, saying which field', async () => {
    const path = `/apis/kubeloop.dev/v1alpha1/namespaces/${ns}/admissionhooks`;
    // Namespaces omitted: the hook's own (the CRD allows it; the shared TypeScript type asks for them).
    const omitted = { serviceAccount: { name: 'hook-reader' }, function: { service: { name: 'fn', port: 8080 } } } as unknown as Partial<AdmissionHookSpec>;
    const own = (spec: Partial<AdmissionHookSpec>): AdmissionHook => ({ ...probe({ ...omitted, ...spec }), kind: 'AdmissionHook' });
    expect(await admit(own({}), admin, path)).toBeUndefined();
    const other = 'kube-system';
    for (const [spec, why] of [
      [{ serviceAccount: { namespace: other, name: 'generic-garbage-collector' } }, `spec.serviceAccount: an AdmissionHook runs as a ServiceAccount of its own namespace (${ns}), not of ${other}`],
      [{ function: { service: { name: 'fn', namespace: other } } }, `spec.function.service: an AdmissionHook calls a Service of its own namespace (${ns}), not of ${other}`],
      [{ function: { service: { name: 'fn', namespace: ns }, signingSecretRef: { name: 's', namespace: other, key: 'k' } } }, 'spec.function.signingSecretRef: an AdmissionHook signs with a Secret of its own namespace'],
      [{ context: [{ name: 'cfg', apiVersion: 'v1', kind: 'ConfigMap', objectName: { value: 'x' }, namespace: other }] }, 'spec.context: an AdmissionHook reads context objects of its own namespace'],
      [{ rules: [{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' as const }] }, `spec.rules: an AdmissionHook sees only namespaced objects of ${ns}`],
      [{ namespaceSelector: { matchLabels: { team: 'b' } } }, 'spec.namespaceSelector: an AdmissionHook sees only its own namespace'],
    ] as Array<[Partial<AdmissionHookSpec>, string]>) {
      expect(String(await admit(own(spec), admin, path)), JSON.stringify(spec)).toContain(why);
    }
  });
});

describe('the gateway', () => {
  it('sends no Secret of another namespace a hook\'s ServiceAccount may not get: Ready=False Forbidden, nothing sent', async () => {
    const other = `${ns}-secrets`;
    await admin.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: other } } });
    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${other}/secrets`, body: { metadata: { name: 'token' }, stringData: { password: 'hunter2' } } });
    const name = `leak-${ns}`;
    await createHook(author, hookBody(name, { failurePolicy: 'Ignore', context: [{ name: 'secret', apiVersion: 'v1', kind: 'Secret', objectName: { value: 'token' }, namespace: other }] }));
    const forbidden = await eventually('Ready=False Forbidden', async () => {
      const condition = await ready(name);
      return condition?.status === 'False' && condition;
    });
    expect(forbidden.reason).toBe('Forbidden');
    expect(forbidden.message).toContain(`ServiceAccount ${ns}/hook-reader may not get secrets in namespace ${other}`);
    expect(await createPod('after-leak')).toBeUndefined();
    expect(seen.filter((r) => r.hook === name)).toEqual([]);
  });

  it('leaves out a hook whose CEL does not compile (InvalidSpec) and keeps another working', async () => {
    const broken = `broken-cel-${ns}`;
    const working = `working-${ns}`;
    await createHook(admin, hookBody(broken, { matchConditions: [{ name: 'nonsense', expression: 'object.metadata.(' }] }));
    await createHook(admin, hookBody(working, { objectSelector: { matchLabels: { check: 'working' } } }));
    const invalid = await eventually('the broken hook InvalidSpec', async () => {
      const condition = await ready(broken);
      return condition?.reason === 'InvalidSpec' && condition;
    });
    expect(invalid.message).toContain('the API server refuses this hook\'s webhook');
    await eventually('the working hook Ready', async () => (await ready(working))?.status === 'True');
    await eventually('the working hook called', async () => (await createPod(`checked-${Date.now()}`, { check: 'working' })) === undefined && seen.some((r) => r.hook === working));
  });

  it('never caches a context object over the value budget: the function gets null, the gateway counts it', async () => {
    const data = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, 'x']));
    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'big' }, data } });
    await admin.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'small' }, data: { a: 'b' } } });
    const name = `budget-${ns}`;
    await createHook(admin, hookBody(name, { failurePolicy: 'Ignore', objectSelector: { matchLabels: { check: 'budget' } }, context: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', objectName: { label: 'config' }, namespace: ns }] }));
    await eventually('the hook Ready', async () => (await ready(name))?.status === 'True');
    const contextOf = async (config: string) => {
      const before = seen.length;
      await eventually(`a pod naming ${config} checked`, async () => (await createPod(`${config}-${Date.now()}`, { check: 'budget', config })) === undefined && seen.slice(before).some((r) => r.hook === name));
      return seen.slice(before).find((r) => r.hook === name)?.context?.config;
    };
    expect((await contextOf('small'))?.data).toEqual({ a: 'b' });
    expect(await contextOf('big')).toBeNull();
    const metric = (await under.webhook.server.metrics.getMetricsAsJSON()).find((m) => m.name === 'kubeloop_admission_context_objects_refused_total');
    expect(metric?.values.reduce((sum, v) => sum + v.value, 0)).toBeGreaterThanOrEqual(1);
  });

  it('denies an object nested 257 levels deep, although the hook says Ignore', async () => {
    await admin.request({
      method: 'POST',
      path: CRDS,
      body: {
        metadata: { name: nestsCrd() },
        spec: {
          group: 'e2e.kubeloop.dev',
          scope: 'Namespaced',
          names: { kind: 'Nest', plural: nestsCrd().split('.')[0], singular: `${nestsCrd().split('.')[0]}-one` },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } } }],
        },
      },
    });
    const plural = nestsCrd().split('.')[0]!;
    await eventually('the CRD served', async () => (await admin.request<{ resources?: Array<{ name: string }> }>({ path: '/apis/e2e.kubeloop.dev/v1' }).catch(() => undefined))?.resources?.some((r) => r.name === plural));
    const name = `depth-${ns}`;
    await createHook(admin, hookBody(name, { failurePolicy: 'Ignore', rules: [{ operations: ['CREATE'], apiGroups: ['e2e.kubeloop.dev'], apiVersions: ['v1'], resources: [plural], scope: 'Namespaced' }] }));
    await eventually('the hook Ready', async () => (await ready(name))?.status === 'True');
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 257; i++) deep = { a: deep };
    const create = async (spec: unknown) => {
      try {
        await admin.request({ method: 'POST', path: `/apis/e2e.kubeloop.dev/v1/namespaces/${ns}/${plural}`, query: { dryRun: 'All' }, body: { apiVersion: 'e2e.kubeloop.dev/v1', kind: 'Nest', metadata: { generateName: 'n-' }, spec } });
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    };
    // A shallow one passes through the function: the hook is in effect.
    await eventually('a shallow object checked by the function', async () => (await create({ a: 1 })) === undefined && seen.some((r) => r.hook === name));
    const refused = await create(deep);
    expect(refused).toContain(`admission webhook "${name}.hooks.kubeloop.dev" denied the request`);
    expect(refused).toContain('does not admit what its function could not check');
  });
});
