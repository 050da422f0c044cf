// Set-up of suites that attack as a namespace admin: the chart's aggregated tenant roles and its Loop and hook
// admission policies, rendered and installed under this suite's names (the control plane is shared), the
// policies bound to objects carrying this suite's label, and users bound to nothing but `admin` in a namespace.
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { eventually } from '../cluster/eventually.ts';
import { byKind, renderChart, type Manifest } from './chart-render.ts';
import { installTenantRoles } from './tenant-kit.ts';

const ADMISSION = '/apis/admissionregistration.k8s.io/v1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

export interface TenantPolicies {
  /** Label objects with this to have the chart's policies check them. */
  label: Record<string, string>;
  /** Deletes what was installed. */
  cleanup(): Promise<void>;
}

/**
 * Installs the tenant ClusterRoles and both admission policies of the chart rendered with `values`, named after
 * `suite`; the bindings select objects labelled `kubeloop.dev/e2e-policy: <suite>`.
 */
export async function installTenantPolicies(client: KubeClient, helm: string, suite: string, values: Record<string, unknown> = {}): Promise<TenantPolicies> {
  const { manifests } = await renderChart(helm, { namespace: suite, values });
  const label = { 'kubeloop.dev/e2e-policy': suite };
  const installed = (await installTenantRoles(client, manifests, suite)).map((name) => `${RBAC}/clusterroles/${name}`);
  for (const suffix of ['-loops', '-admission-hooks']) {
    const of = (m: Manifest) => m.metadata.name.endsWith(suffix);
    const policy = byKind(manifests, 'ValidatingAdmissionPolicy').find(of) as Manifest & { spec: Record<string, unknown> };
    const binding = byKind(manifests, 'ValidatingAdmissionPolicyBinding').find(of) as Manifest & { spec: Record<string, unknown> };
    const name = `${suite}${suffix}`;
    await client.request({ method: 'POST', path: `${ADMISSION}/validatingadmissionpolicies`, body: { ...policy, metadata: { name } } });
    await client.request({
      method: 'POST',
      path: `${ADMISSION}/validatingadmissionpolicybindings`,
      body: { ...binding, metadata: { name }, spec: { ...binding.spec, policyName: name, matchResources: { objectSelector: { matchLabels: label } } } },
    });
    installed.push(`${ADMISSION}/validatingadmissionpolicybindings/${name}`, `${ADMISSION}/validatingadmissionpolicies/${name}`);
  }
  await untilLoopPolicyEnforced(client, suite, label);
  await untilHookPolicyEnforced(client, suite, label);
  return {
    label,
    cleanup: async () => {
      for (const path of installed) await client.request({ method: 'DELETE', path }).catch(() => undefined);
    },
  };
}

/** A user holding nothing but the built-in `admin` (or `edit`) role in `namespace` (a RoleBinding), acting through `client`. */
export async function namespaceAdmin(client: KubeClient, namespace: string, user: string, role: 'admin' | 'edit' = 'admin'): Promise<KubeClient> {
  await client.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${namespace}/rolebindings`,
    body: { metadata: { name: user }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }] },
  });
  return client.impersonating({ user }, { qps: 100, burst: 200 });
}

/** Creates `body` at `path` as `client` (a server-side dry run unless `dryRun` is false); what refused it, or undefined when admitted. */
async function refusalErrorOf(client: KubeClient, path: string, body: unknown, dryRun = true): Promise<unknown> {
  try {
    await client.request({ method: 'POST', path, body, ...(dryRun ? { query: { dryRun: 'All' } } : {}) });
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Creates `body` at `path` as `client`; undefined when admitted, the refusal's message otherwise. */
export async function refusalOf(client: KubeClient, path: string, body: unknown, dryRun = true): Promise<string | undefined> {
  const error = await refusalErrorOf(client, path, body, dryRun);
  return error === undefined ? undefined : (error as Error).message;
}

const API = '/apis/kubeloop.dev/v1alpha1';
/** A namespace no test creates: a probe naming it is refused by the policies' confinement, and by nothing else. */
const ELSEWHERE = 'policy-probe-elsewhere';

/** Polls a dry-run create until the policy refuses it with `message`; a kind whose CRD this suite did not install (404) has nothing to wait for. */
async function untilRefused(what: string, client: KubeClient, path: string, body: unknown, message: string): Promise<void> {
  await eventually(what, async () => {
    const error = await refusalErrorOf(client, path, body);
    // A 404 is the kind itself missing (its group may be served for another kind, answering a bare 404 page).
    if (isApiError(error, 404)) return true;
    return (error instanceof Error && error.message.includes(message)) || undefined;
  }, 60_000);
}

/**
 * Waits until the API server enforces a freshly bound Loop policy: a binding takes effect some time after it
 * is stored (the admission plugin's policy cache), so a suite asserting a refusal at once would race it. The
 * probe is a dry-run Loop in `namespace`, carrying `labels`, whose only fault is a ServiceAccount elsewhere.
 */
export async function untilLoopPolicyEnforced(client: KubeClient, namespace: string, labels: Record<string, string>): Promise<void> {
  const body = {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'Loop',
    metadata: { name: 'policy-probe', labels },
    spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, serviceAccount: { namespace: ELSEWHERE, name: 'probe' }, function: { url: `http://probe.${namespace}.svc:8080/` } },
  };
  await untilRefused(`the Loop policy enforced in ${namespace}`, client, `${API}/namespaces/${namespace}/loops`, body, 'a Loop acts as a ServiceAccount of its own namespace');
}

/** The same for the AdmissionHook policy: a dry-run hook whose only fault is a ServiceAccount elsewhere. */
export async function untilHookPolicyEnforced(client: KubeClient, namespace: string, labels: Record<string, string>): Promise<void> {
  const body = {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'AdmissionHook',
    metadata: { name: 'policy-probe', labels },
    spec: {
      type: 'validating',
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      serviceAccount: { namespace: ELSEWHERE, name: 'probe' },
      function: { service: { name: 'probe', namespace, port: 8080 } },
    },
  };
  await untilRefused(`the AdmissionHook policy enforced in ${namespace}`, client, `${API}/namespaces/${namespace}/admissionhooks`, body, 'an AdmissionHook runs as a ServiceAccount of its own namespace');
}
