// `kubeloop dev --tenant team-a`: the namespace and a user who holds nothing but the built-in `admin` role in it
// (a RoleBinding), with a kubeconfig of its own (a client certificate from the local control plane's CA), so
// docs/tenants.md runs on dev as written and the chart's aggregated roles and admission policies judge what
// that user applies exactly as in production.
import { join } from 'node:path';
import { KubeClient, loadKubeConfig, type ResourceDiscovery } from '../../lib/kube/index.ts';
import { applyManifest, ensureNamespace } from './apply-manifests.ts';
import { clientKubeconfig } from './chart-platform.ts';

export interface TenantUser {
  namespace: string;
  user: string;
  /** Its kubeconfig file, whose context defaults to the namespace. */
  kubeconfig: string;
  client: KubeClient;
}

/** The user name dev gives a namespace's admin. */
export function tenantUserName(namespace: string): string {
  return `${namespace}-admin`;
}

export async function createTenantUser(client: KubeClient, discovery: ResourceDiscovery, plane: { dir: string; server: string }, dir: string, namespace: string): Promise<TenantUser> {
  const user = tenantUserName(namespace);
  await ensureNamespace(client, discovery, namespace);
  await applyManifest(client, discovery, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: user, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  const kubeconfig = await clientKubeconfig(plane, user, join(dir, `${namespace}.kubeconfig`), [], namespace);
  return { namespace, user, kubeconfig, client: await KubeClient.fromKubeConfig(await loadKubeConfig({ kubeconfig })) };
}
