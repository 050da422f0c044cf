// The gateway's one decision per admission (as the router's decide per key): from where the admission stopped
// (turned away before the call by a gateway bound, or the function's answer, checked), what the API server is
// answered, the outcome counted and what the hook is charged with. Pure; admission-gateway.ts carries it out.
import type { AdmissionResponse as ReviewResponse } from './admission-review.ts';
import { applyFailurePolicy, type CallFailure, type Conversion } from './hook-review.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';

/** Bounded metric label: allowed, denied, patched, or how the function failed. */
export type GatewayOutcome = 'allowed' | 'denied' | 'patched' | CallFailure['kind'];

/**
 * Where an admission stopped: over its tenant's cap of calls in flight, at its hook's open circuit breaker,
 * over a request bound (context bytes, the byte budget, a context not yet cached), or called.
 */
export type AdmissionStop =
  | { stage: 'tenant-cap' | 'breaker' | 'bounds'; failure: CallFailure }
  | { stage: 'called'; answer: Conversion };

export interface AdmissionDecision {
  stage: AdmissionStop['stage'];
  /** What the API server is answered. */
  response: ReviewResponse;
  outcome: GatewayOutcome;
  /** Why the function's answer was not used; its failurePolicy gave the response. */
  failure?: CallFailure;
  /** The hook's breaker and FunctionAvailable hear of it: only a call says how the function is doing. */
  reportsCall: boolean;
  /** The time to the answer is observed, unless the request was turned away before any work (tenant cap, breaker). */
  observesDuration: boolean;
}

export function decideAdmission(uid: string, hook: ResolvedHook, stop: AdmissionStop): AdmissionDecision {
  const { stage } = stop;
  const effects = { stage, reportsCall: stage === 'called', observesDuration: stage === 'bounds' || stage === 'called' };
  const failed = (failure: CallFailure): AdmissionDecision => ({ ...effects, response: applyFailurePolicy(uid, hook, failure), outcome: failure.kind, failure });
  if (stop.stage !== 'called') return failed(stop.failure);
  if (!stop.answer.ok) return failed(stop.answer.failure);
  const { response } = stop.answer;
  return { ...effects, response, outcome: !response.allowed ? 'denied' : response.patch ? 'patched' : 'allowed' };
}
