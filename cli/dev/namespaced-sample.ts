// A sample ClusterLoop as a team would run it: a namespaced Loop of one namespace with its ServiceAccount, and
// its ClusterRole's rules as a Role there. The soak's --namespaced-loops runs such Loops beside cluster ones.
import type { Manifest } from './apply-manifests.ts';

interface SampleLoop extends Manifest {
  spec: Record<string, unknown> & { serviceAccount?: { name: string; namespace?: string } };
}

/**
 * The Loop (kind Loop, in `namespace`, spec.namespaces dropped: it sees only its own), its ServiceAccount of the
 * same name there, and a Role and RoleBinding with `rules` (the ClusterRole the sample binds it to).
 */
export function namespacedSampleLoop(loop: SampleLoop, rules: unknown[], namespace: string): Manifest[] {
  const account = loop.spec.serviceAccount?.name ?? `${loop.metadata.name}-loop`;
  const { namespaces: _all, ...spec } = loop.spec;
  const meta = (name: string) => ({ name, namespace });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(account), automountServiceAccountToken: false },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta(account), rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(account),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
    { ...loop, kind: 'Loop', metadata: { ...loop.metadata, namespace }, spec: { ...spec, serviceAccount: { name: account } } },
  ];
}
