// The namespace safety every kubeloop webhook entry gets (hook-configuration.ts): kube-system and kubeloop's own
// namespace are never sent to a hook, so a broken hook cannot lock the cluster or the gateway out.
import type { V1LabelSelectorRequirement } from '@kubernetes/client-node';

/** Label the API server puts on every namespace (1.21+); lets the selector exclude by name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export interface NamespaceSafety {
  kubeloopNamespace: string;
  excludedNamespaces?: string[];
  onlyNamespaces?: string[];
}

/** kube-system and kubeloop's own namespace are never sent to a webhook; tests narrow to their namespaces. */
export function namespaceSafetyExpressions(options: NamespaceSafety): V1LabelSelectorRequirement[] {
  const excluded = [...new Set(['kube-system', options.kubeloopNamespace, ...(options.excludedNamespaces ?? [])])];
  const matchExpressions: V1LabelSelectorRequirement[] = [{ key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: excluded }];
  if (options.onlyNamespaces?.length) matchExpressions.push({ key: NAMESPACE_NAME_LABEL, operator: 'In', values: options.onlyNamespaces });
  return matchExpressions;
}

/** Whether objects of `namespace` may reach any hook at all (the safety expressions above, evaluated). */
export function isNamespaceSent(namespace: string, options: NamespaceSafety): boolean {
  return namespaceSafetyExpressions(options).every((expression) => (expression.operator === 'In') === (expression.values ?? []).includes(namespace));
}
