// bench:tenants-scale, an API server setting beside the router's: a Priority and Fairness level of its own for every
// ServiceAccount's namespaced requests (BENCH_APF_TENANT_SHARES), small and not borrowing, so the API server queues
// them and serves each ServiceAccount (each tenant here) its fair turn, where the default levels run them all at once.
import { isApiError, type KubeClient } from '../lib/kube/kube-client.ts';

const FLOWCONTROL = '/apis/flowcontrol.apiserver.k8s.io/v1';
export const TENANT_LEVEL = 'kubeloop-bench-tenants';

/** The PriorityLevelConfiguration and FlowSchema; after kube-system's service accounts (900), before the rest (9000). */
export function tenantFlowControl(shares: number): { level: object; schema: object } {
  if (!Number.isInteger(shares) || shares < 1) throw new Error(`BENCH_APF_TENANT_SHARES: "${shares}" is not a positive whole number of concurrency shares`);
  return {
    level: {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: TENANT_LEVEL },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: shares,
          // Its own seats only: a level that borrows idle seats would run everything at once again.
          lendablePercent: 0,
          borrowingLimitPercent: 0,
          limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 } },
        },
      },
    },
    schema: {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: TENANT_LEVEL },
      spec: {
        priorityLevelConfiguration: { name: TENANT_LEVEL },
        matchingPrecedence: 1000,
        distinguisherMethod: { type: 'ByUser' },
        rules: [{ subjects: [{ kind: 'Group', group: { name: 'system:serviceaccounts' } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] }],
      },
    },
  };
}

/** Creates the level and schema; the returned function deletes them again. */
export async function withTenantFlowControl(client: KubeClient, shares: number): Promise<() => Promise<void>> {
  const { level, schema } = tenantFlowControl(shares);
  await client.request({ method: 'POST', path: `${FLOWCONTROL}/prioritylevelconfigurations`, body: level });
  await client.request({ method: 'POST', path: `${FLOWCONTROL}/flowschemas`, body: schema });
  return async () => {
    for (const kind of ['flowschemas', 'prioritylevelconfigurations']) {
      await client.request({ method: 'DELETE', path: `${FLOWCONTROL}/${kind}/${TENANT_LEVEL}` }).catch((error: unknown) => {
        if (!isApiError(error, 404)) throw error;
      });
    }
  };
}
