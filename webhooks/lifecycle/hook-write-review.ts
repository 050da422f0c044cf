// What a namespaced mutating hook may change: only what its ServiceAccount may update and patch, asked of the
// API server (SubjectAccessReview per resource and subresource) before the hook is registered and at every
// periodic review, as the router reviews its Loops' access. The author's side is the chart's hook policy.
import { reviewAccess } from '../../lib/kube/access-review.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';
import { mutatingWriteChecks } from '../base/namespaced-hook-rules.ts';

/** Ready=False Forbidden naming what the ServiceAccount may not write, or undefined (cluster and validating hooks: nothing to check). */
export async function hookWriteRefusal(client: KubeClient, hook: ResolvedHook): Promise<ConditionInput | undefined> {
  if (!hook.namespace || hook.spec.type !== 'mutating') return undefined;
  const checks = mutatingWriteChecks(hook.spec.rules, hook.namespace);
  const verdict = await reviewAccess(client, hook.spec.serviceAccount, checks, 'a namespaced mutating hook changes only what its ServiceAccount may update and patch; the hook is not registered until that RBAC exists');
  if (verdict.allowed) return undefined;
  return { type: 'Ready', status: 'False', reason: 'Forbidden', message: verdict.message, ...(hook.generation !== undefined ? { observedGeneration: hook.generation } : {}) };
}
