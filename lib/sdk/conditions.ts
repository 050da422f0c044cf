// Status conditions (metav1.Condition as JSON) for reconcile functions: set one without churning
// lastTransitionTime, so a replayed reconcile that changes nothing writes no status.

import type { Condition } from '../../api/meta.ts';
import { metaTime } from '../kube/meta-time.ts';

export type { Condition };

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** Reads `.status.conditions` of an object, ignoring entries that are not condition-shaped. */
export function conditionsOf(object: { status?: unknown }): Condition[] {
  const status = object.status as { conditions?: unknown } | undefined;
  if (!Array.isArray(status?.conditions)) return [];
  return status.conditions.filter(
    (c): c is Condition => typeof c === 'object' && c !== null && typeof (c as Condition).type === 'string',
  );
}

/**
 * Returns `conditions` with `desired` in place of the condition of the same type (appended when absent).
 * lastTransitionTime is kept when the status value did not change and set to `now` when it did,
 * as Kubernetes' meta.SetStatusCondition does.
 */
export function withCondition(conditions: Condition[], desired: ConditionInput, now: string): Condition[] {
  const existing = conditions.find((c) => c.type === desired.type);
  const lastTransitionTime =
    existing && existing.status === desired.status && existing.lastTransitionTime ? existing.lastTransitionTime : now;
  const next: Condition = { ...desired, lastTransitionTime };
  return existing ? conditions.map((c) => (c.type === desired.type ? next : c)) : [...conditions, next];
}

/** Normalises the router's clock to whole seconds, the precision of metav1.Time. */
export function toMetaTime(now: string): string {
  const millis = Date.parse(now);
  if (Number.isNaN(millis)) throw new Error(`request.now "${now}" is not an RFC 3339 time`);
  return metaTime(new Date(millis));
}
