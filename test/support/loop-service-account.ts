// ServiceAccounts for Loops in tests and benchmarks: the router acts as a Loop's ServiceAccount, so every
// Loop needs one with RBAC. By default it may do everything in one namespace and nothing elsewhere.
import type { V1PolicyRule } from '@kubernetes/client-node';
import type { ServiceAccountRef } from '../../api/loop.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';

/** The ServiceAccount inlineLoop names unless told otherwise; routerHarness creates it in the suite namespace. */
export const LOOP_SERVICE_ACCOUNT = 'kubeloop-loop';

export interface LoopServiceAccountOptions {
  namespace: string;
  name?: string;
  /** Rules of a Role in `namespace`; everything in the namespace when omitted, nothing when empty. */
  rules?: V1PolicyRule[];
}

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

async function createOrKeep(client: KubeClient, path: string, body: unknown): Promise<void> {
  try {
    await client.request({ method: 'POST', path, body });
  } catch (error) {
    if (!isApiError(error, 409)) throw error;
  }
}

/** Creates (or keeps) the ServiceAccount, a Role with `rules` and its RoleBinding, all named after the account. */
export async function createLoopServiceAccount(client: KubeClient, options: LoopServiceAccountOptions): Promise<ServiceAccountRef> {
  const { namespace } = options;
  const name = options.name ?? LOOP_SERVICE_ACCOUNT;
  const rules = options.rules ?? [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
  await createOrKeep(client, `/api/v1/namespaces/${namespace}/serviceaccounts`, { metadata: { name } });
  if (rules.length > 0) {
    await createOrKeep(client, `${RBAC}/namespaces/${namespace}/roles`, { metadata: { name }, rules });
    await createOrKeep(client, `${RBAC}/namespaces/${namespace}/rolebindings`, {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace }],
    });
  }
  return { namespace, name };
}
