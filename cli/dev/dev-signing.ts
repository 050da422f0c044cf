// `kubeloop dev` signs every call like the chart does: a key per local function (passed in its environment),
// a Secret holding it beside the Loop's ServiceAccount, a Role letting only that account get it, and the
// Loop's spec.function.signingSecretRef. Pure: builds the objects; run-dev.ts applies them.
import type { Manifest } from './apply-manifests.ts';

export const SIGNING_SECRET_KEY = 'secret';

export interface SignedLoop extends Manifest {
  spec: { serviceAccount?: { namespace?: string; name?: string }; function: Record<string, unknown> };
}

/** The Secret, Role and RoleBinding for one Loop's key, then the Loop naming it; throws when it names no ServiceAccount. */
export function signingManifests(loop: SignedLoop, secret: string): { objects: Manifest[]; loop: SignedLoop } {
  const account = loop.spec.serviceAccount;
  if (!account?.namespace || !account.name) throw new Error(`Loop ${loop.metadata.name}: spec.serviceAccount { namespace, name } is required to read its signing key`);
  const name = `kubeloop-dev-${loop.metadata.name}-signing`.slice(0, 63).replace(/-+$/, '');
  const metadata = { name, namespace: account.namespace, labels: { 'app.kubernetes.io/managed-by': 'kubeloop-dev', 'kubeloop.dev/loop': loop.metadata.name } };
  const objects: Manifest[] = [
    { apiVersion: 'v1', kind: 'Secret', metadata, type: 'Opaque', stringData: { [SIGNING_SECRET_KEY]: secret } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [name], verbs: ['get', 'list', 'watch'] }] },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name: account.name, namespace: account.namespace }],
    },
  ];
  const signingSecretRef = { name, namespace: account.namespace, key: SIGNING_SECRET_KEY };
  return { objects, loop: { ...loop, spec: { ...loop.spec, function: { ...loop.spec.function, signingSecretRef } } } };
}
