// What the tenant suites set up alike on the shared control plane: the chart's aggregated tenant roles (so
// `admin` and `edit` manage Loops), a router identity holding exactly the chart's router ClusterRole, and any
// other identity by a client certificate.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { issueCertificate } from '../../cli/cluster/index.ts';
import { kubeconfigYaml } from '../../cli/cluster/kubeconfig-file.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { byKind, type Manifest } from './chart-render.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

/** The rendered tenant ClusterRoles (admin, edit, view), renamed `<prefix>-tenant-*` so suites never collide; their names. */
export async function installTenantRoles(client: KubeClient, manifests: Manifest[], prefix: string): Promise<string[]> {
  const names: string[] = [];
  for (const role of byKind(manifests, 'ClusterRole').filter((m) => /-tenant-(admin|edit|view)$/.test(m.metadata.name))) {
    const name = `${prefix}-${role.metadata.name.replace(/^.*-(tenant-)/, '$1')}`;
    names.push(name);
    await client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { ...role, metadata: { ...role.metadata, name } } });
  }
  return names;
}

/**
 * A user bound to exactly the chart's router ClusterRole (Loops, their status and finalizer, events, reviews,
 * Services), with a client certificate from the control plane's CA: the router runs as it.
 */
export async function chartRouterIdentity(client: KubeClient, manifests: Manifest[], user: string, server: string): Promise<KubeConfig> {
  const routerRole = byKind(manifests, 'ClusterRole').find((m) => m.metadata.name.endsWith('-router-loops')) as Manifest & { rules: unknown[] };
  await client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { metadata: { name: user }, rules: routerRole.rules } });
  await client.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: { metadata: { name: user }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user }, subjects: [{ kind: 'User', name: user, apiGroup: 'rbac.authorization.k8s.io' }] },
  });
  return certificateKubeConfig(server, user);
}

/** A KubeConfig acting as `user` with a client certificate from the shared control plane's CA (no RBAC of its own). */
export async function certificateKubeConfig(server: string, user: string): Promise<KubeConfig> {
  const pkiDir = join(inject('clusterDir'), 'pki');
  const ca = { certPem: readFileSync(join(pkiDir, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pkiDir, 'ca.key'), 'utf8') };
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(kubeconfigYaml(server, ca.certPem, user, await issueCertificate(ca, { commonName: user, usage: 'client' })));
  return kubeConfig;
}
