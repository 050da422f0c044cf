// The one writer of status conditions (metav1.Condition as JSON), as Metacontroller's status.go: every
// controller (the router's Loop status, the gateway's hook status, reconcile functions through the SDK) sets a
// condition here, so lastTransitionTime follows one rule everywhere.
import type { Condition } from '../../api/meta.ts';

/** A condition as a controller decides it; the writer adds lastTransitionTime. */
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
 * `desired` as it is written over `existing` (the condition of the same type, if any): lastTransitionTime is
 * kept when the status did not change and set to `now` (metav1.Time) when it did, as Kubernetes'
 * meta.SetStatusCondition does, so a reason or message that changes is no transition.
 */
export function nextCondition(existing: Condition | undefined, desired: ConditionInput, now: string): Condition {
  const lastTransitionTime = existing && existing.status === desired.status && existing.lastTransitionTime ? existing.lastTransitionTime : now;
  return { ...desired, lastTransitionTime };
}

/** Returns `conditions` with `desired` in place of the condition of the same type (appended when absent). */
export function withCondition(conditions: Condition[], desired: ConditionInput, now: string): Condition[] {
  const existing = conditions.find((c) => c.type === desired.type);
  const next = nextCondition(existing, desired, now);
  return existing ? conditions.map((c) => (c.type === desired.type ? next : c)) : [...conditions, next];
}
