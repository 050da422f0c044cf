// The request `kubeloop diff` sends for one primary: what the router's call would carry, children from the
// owned kinds' lists and request.related from the related entries' lists, sorted by the router's own code.
import type { KubeObject, ReconcileRequest } from '../../lib/contract/types.ts';
import { buildRequest } from '../../lib/reconcile/build-request.ts';
import { relatedObjectsOf } from '../../router/index.ts';
import type { LoopState } from './loop-state.ts';

export function diffRequest(state: Pick<LoopState, 'config' | 'owned' | 'related'>, primary: KubeObject, finalizing: boolean, now: Date): ReconcileRequest {
  // As the router: request.related only for a Loop with spec.related, one key per entry even when empty.
  const related = state.related.length > 0 ? relatedObjectsOf(primary, state.related) : undefined;
  return buildRequest({ loop: state.config.name, loopNamespace: state.config.namespace, primary, owned: state.owned, trigger: { type: 'RESYNC' }, finalizing, now, ...(related ? { related } : {}) });
}
