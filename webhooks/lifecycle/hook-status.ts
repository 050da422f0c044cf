// The AdmissionHook status the gateway writes: Ready (registered in the webhook configuration, or why
// not) and FunctionAvailable (the last calls succeeded, or how they failed). Pure apart from the write.
import type { AdmissionHook } from '../../api/admission-hook.ts';
import { ADMISSION_HOOK_API_VERSION, ADMISSION_HOOK_PLURAL, CLUSTER_ADMISSION_HOOK_PLURAL } from '../../api/admission-hook.ts';
import type { Condition } from '../../api/meta.ts';
import { isApiError, type KubeClient } from '../../lib/kube/index.ts';
import { conditionsOf, withCondition, type ConditionInput } from '../../lib/sdk/conditions.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';
import { metaTime } from '../../lib/kube/meta-time.ts';
import { CANARY_ROLLED_BACK } from '../../lib/versions/error-budget.ts';
import { SHADOW_DIVERGED } from '../../lib/versions/shadow-divergence.ts';

/** The status subresource of an AdmissionHook (metadata.namespace set) or a ClusterAdmissionHook. */
export function hookStatusPath(metadata: { name?: string; namespace?: string } | undefined): string {
  const name = encodeURIComponent(metadata?.name ?? '');
  const namespace = metadata?.namespace;
  return namespace
    ? `/apis/${ADMISSION_HOOK_API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${ADMISSION_HOOK_PLURAL}/${name}/status`
    : `/apis/${ADMISSION_HOOK_API_VERSION}/${CLUSTER_ADMISSION_HOOK_PLURAL}/${name}/status`;
}

/** Ready=False with the reason and message (observedGeneration: the generation judged). */
export function notReady(reason: string, message: string, generation: number | undefined): ConditionInput {
  return { type: 'Ready', status: 'False', reason, message, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** Ready=True: where the hook is served and in which configuration (a namespaced hook: the shared entry too). */
export function registeredCondition(hook: ResolvedHook, configuration: string, generation: number | undefined): ConditionInput {
  const kind = hook.spec.type === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  const entry = hook.namespace ? ` (the webhook entry namespaced AdmissionHooks of this shape share, ${hook.path.split('/').pop()}.namespaced.hooks.kubeloop.dev)` : '';
  return { type: 'Ready', status: 'True', reason: 'Registered', message: `served at ${hook.path}${entry}, registered in ${kind} ${configuration}`, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** The conditions after setting `desired`, or undefined when nothing a reader sees would change. */
export function nextConditions(hook: AdmissionHook, desired: ConditionInput[], now: Date): Condition[] | undefined {
  const current = conditionsOf(hook);
  let next = current;
  const time = metaTime(now);
  for (const condition of desired) next = withCondition(next, condition, time);
  // A shadow's or canary's condition goes with the shadow or canary.
  const fn = hook.spec?.function;
  next = next.filter((c) => !(c.type === SHADOW_DIVERGED && !fn?.shadow) && !(c.type === CANARY_ROLLED_BACK && !fn?.canary));
  const same = (a: Condition | undefined, b: Condition): boolean =>
    a !== undefined && a.status === b.status && a.reason === b.reason && a.message === b.message && a.observedGeneration === b.observedGeneration;
  return next.length === current.length && next.every((c) => same(current.find((o) => o.type === c.type), c)) ? undefined : next;
}

export async function writeHookConditions(client: KubeClient, hook: AdmissionHook, conditions: Condition[], timeoutMs?: number): Promise<void> {
  const status: Record<string, unknown> = { conditions };
  if (hook.metadata?.generation !== undefined) status.observedGeneration = hook.metadata.generation;
  try {
    await client.request({ method: 'PATCH', path: hookStatusPath(hook.metadata), contentType: 'application/merge-patch+json', body: { status }, ...(timeoutMs ? { timeoutMs } : {}) });
  } catch (error) {
    // Deleted meanwhile: nothing to report on.
    if (!isApiError(error, 404)) throw error;
  }
}
