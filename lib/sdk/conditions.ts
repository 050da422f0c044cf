// Status conditions (metav1.Condition as JSON) for reconcile functions: set one without churning
// lastTransitionTime, so a replayed reconcile that changes nothing writes no status. The writer is the
// platform's own (lib/kube/conditions.ts); this adds the request clock's conversion.
import type { Condition } from '../../api/meta.ts';
import { metaTime } from '../kube/meta-time.ts';

export type { Condition };
export { conditionsOf, withCondition, type ConditionInput } from '../kube/conditions.ts';

/** Normalises the router's clock to whole seconds, the precision of metav1.Time. */
export function toMetaTime(now: string): string {
  const millis = Date.parse(now);
  if (Number.isNaN(millis)) throw new Error(`request.now "${now}" is not an RFC 3339 time`);
  return metaTime(new Date(millis));
}
