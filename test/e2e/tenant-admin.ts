// Set-up of suites that attack as a namespace admin: the chart's aggregated tenant roles and its Loop and hook
// admission policies, rendered and installed under this suite's names (the control plane is shared), the
// policies bound to objects carrying this suite's label, and users bound to nothing but `admin` in a namespace.
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { byKind, renderChart, type Manifest } from './chart-render.ts';

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
  const installed: string[] = [];
  for (const role of byKind(manifests, 'ClusterRole').filter((m) => /-tenant-(admin|edit|view)$/.test(m.metadata.name))) {
    const name = `${suite}-${role.metadata.name.replace(/^.*-(tenant-)/, '$1')}`;
    await client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { ...role, metadata: { ...role.metadata, name } } });
    installed.push(`${RBAC}/clusterroles/${name}`);
  }
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
  return {
    label,
    cleanup: async () => {
      for (const path of installed) await client.request({ method: 'DELETE', path }).catch(() => undefined);
    },
  };
}

/** A user holding nothing but the built-in `admin` role in `namespace` (a RoleBinding), acting through `client`. */
export async function namespaceAdmin(client: KubeClient, namespace: string, user: string): Promise<KubeClient> {
  await client.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${namespace}/rolebindings`,
    body: { metadata: { name: user }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }, subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }] },
  });
  return client.impersonating({ user }, { qps: 100, burst: 200 });
}

/** Creates `body` at `path` as `client`; undefined when admitted, the refusal's message otherwise. */
export async function refusalOf(client: KubeClient, path: string, body: unknown, dryRun = true): Promise<string | undefined> {
  try {
    await client.request({ method: 'POST', path, body, ...(dryRun ? { query: { dryRun: 'All' } } : {}) });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
