// How queue entries for one key merge their triggers. The request itself is built by
// lib/reconcile/build-request.ts, shared with `kubeloop diff`.
import type { Trigger } from '../../lib/contract/types.ts';

/** Keeps the most informative trigger when queue entries coalesce: real events beat resyncs. */
export function mergeTriggers(waiting: Trigger, incoming: Trigger): Trigger {
  const rank = (t: Trigger) => (t.type === 'RESYNC' ? 0 : t.type === 'REQUEUE' ? 1 : 2);
  return rank(incoming) >= rank(waiting) ? incoming : waiting;
}
