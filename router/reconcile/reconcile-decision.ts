// The router's decisions about one reconcile, pure like controller-runtime's reconcileHandler: which
// finalizer step comes first, which writes a reply asks for, and what the facts of a reconcile (the
// call's result, what applying the reply did) mean for the queue, the Loop's health and the events.
import type { JsonPatchOperation, KubeObject, ReconcileResponse } from '../../lib/contract/types.ts';
import type { ApplyOutcome, RouterAction } from '../apply/apply-actions.ts';
import type { DispatchResult } from './dispatch.ts';
import type { RequiresProblem } from './required-objects.ts';
import type { RefResolution } from '../base/function-ref.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { ReconcileResult } from '../base/router-metrics.ts';
import { addFinalizerPatch, hasFinalizer, removeFinalizerPatch } from '../apply/patch-building.ts';
import { DEFAULT_MIN_REQUEUE_MS, flooredDelayMs } from './requeue-floor.ts';

/** Why a spec.function.ref does not resolve (FunctionRefNotFound, FunctionRefNotReady, FunctionRefInvalid). */
type RefUnresolvedReason = Extract<RefResolution, { ok: false }>['reason'];

export type LoopHealthReason =
  | 'Running'
  | 'FunctionUnreachable'
  | 'FunctionRejected'
  | 'InvalidResponse'
  | 'InvalidSignature'
  | 'AddressRefused'
  | 'Overloaded'
  | 'InvalidSigningSecret'
  | 'Forbidden'
  | 'InvalidSpec'
  | 'ServiceAccountRequired'
  | 'TenantLimitExceeded'
  | 'StartThrottled'
  | RequiresProblem['reason']
  | RefUnresolvedReason;
export interface LoopHealth {
  ready: boolean;
  reason: LoopHealthReason;
  message: string;
}

/** What the queue does with the key next. */
export type QueueStep =
  /** Done: reset the key's backoff. */
  | { kind: 'forget' }
  /** Done, and call again after the delay the function asked for. */
  | { kind: 'forget-and-requeue-after'; delayMs: number }
  /** Not done; call again after a delay someone named (Retry-After, retryAfterSeconds, expectations). */
  | { kind: 'requeue-after'; delayMs: number }
  /** Failed: call again after the key's next exponential backoff delay. */
  | { kind: 'backoff' }
  /** Nothing now: the watch event of our own write brings the key back. */
  | { kind: 'wait' };

/** A queue step as controller-runtime labels the reconcile that led to it: backoff is an error, a delay a requeue_after. */
export function reconcileResult(step: QueueStep): ReconcileResult {
  switch (step.kind) {
    case 'backoff':
      return 'error';
    case 'requeue-after':
    case 'forget-and-requeue-after':
      return 'requeue_after';
    case 'forget':
    case 'wait':
      return 'success';
  }
}

/** The `result` label of kubeloop_router_reconcile_duration_seconds. */
export type ReconcileOutcome = 'ok' | 'conflict' | 'action-error' | 'function-error' | 'throttled' | 'rejected' | 'error';

export type ReconcileFacts =
  | CallFacts
  /** The watch has not yet shown the children this owner created or deleted. */
  | { stage: 'expectations-pending'; remainingMs: number }
  /** The primary is exactly what the function's last answer produced (own-writes.ts): no call needed. */
  | { stage: 'own-write-seen' }
  /** The cache still holds the version an answer kept after a conflict was sent for (conflict-replay.ts). */
  | { stage: 'replay-pending' }
  /** The router wrote its finalizer onto the primary instead of calling the function. */
  | { stage: 'finalizer-added'; applied: ApplyOutcome };

/** The facts of a reconcile that called the function. */
export type CallFacts =
  /** The call got no usable reply. */
  | { stage: 'call-failed'; call: Exclude<DispatchResult, { kind: 'ok' }> }
  /** The function's requires could not be met (a bound, a kind its ServiceAccount may not read): nothing applied. */
  | ({ stage: 'requires-failed' } & RequiresProblem)
  /** The function replied and its actions (and any finalizer removal) were applied. */
  | { stage: 'applied'; response: ReconcileResponse; applied: ApplyOutcome; deleted: boolean; callMs: number };

export interface ReconcileLog {
  /** `sampled`: warn on a key's first two failures and every tenth, debug otherwise (a function that stays down). */
  level: 'debug' | 'info' | 'warn' | 'sampled';
  message: string;
  fields?: Record<string, unknown>;
}

export interface ReconcileDecision {
  step: QueueStep;
  /** Set when the function was called. */
  outcome?: ReconcileOutcome;
  /** A Warning event on the primary. */
  warning?: { reason: string; message: string };
  /** The Loop's health after this call, for its Ready condition (a backoff delay is appended to the message). */
  health?: LoopHealth;
  /** The deleted primary has been told about its deletion: its tombstone can go. */
  dropTombstone?: boolean;
  log?: ReconcileLog;
}

export type CallDecision = ReconcileDecision & { outcome: ReconcileOutcome };

/** How a primary stands with the Loop's finalizer before any call. */
export type FinalizerPhase =
  /** No finalizer business: call the function as usual. */
  | { kind: 'call'; finalizing: false }
  /** Deleting and holding our finalizer: the call must clean up and answer `finalized`. */
  | { kind: 'call'; finalizing: true }
  /** Write the finalizer first (and nothing else). */
  | { kind: 'add-finalizer'; patch: JsonPatchOperation[] }
  /** Nothing to do: being deleted and no longer (or never) ours to finalize. */
  | { kind: 'skip' };

export function finalizerPhase(loop: Pick<LoopConfig, 'finalize' | 'finalizer' | 'sendDeletes'>, primary: KubeObject, deleted: boolean): FinalizerPhase {
  const deleting = !deleted && primary.metadata?.deletionTimestamp !== undefined;
  if (loop.finalize && !deleted) {
    const held = hasFinalizer(primary, loop.finalizer);
    if (!deleting && !held) return { kind: 'add-finalizer', patch: addFinalizerPatch(primary, loop.finalizer) };
    if (deleting && !held) return { kind: 'skip' };
    return { kind: 'call', finalizing: deleting };
  }
  if (deleting && !loop.sendDeletes) return { kind: 'skip' };
  return { kind: 'call', finalizing: false };
}

/**
 * The writes a reply asks for: a deleted primary has no status left to write; a finalizing one loses the
 * finalizer once the function says `finalized`, after its other actions went through.
 */
export function writesFor(
  response: ReconcileResponse,
  ctx: { primary: KubeObject; finalizer: string; deleted: boolean; finalizing: boolean },
): RouterAction[] {
  const actions: RouterAction[] = ctx.deleted ? response.actions.filter((a) => a.op !== 'status') : [...response.actions];
  if (response.finalized && ctx.finalizing) {
    const patch = removeFinalizerPatch(ctx.primary, ctx.finalizer);
    if (patch) actions.push({ op: 'finalizer', patch });
  }
  return actions;
}

/** What the decision needs to know of the Loop beyond the facts. */
export interface DecisionPolicy {
  /** Floor on the delays a function asks for (requeueAfterSeconds, retryAfterSeconds, Retry-After). */
  minRequeueMs: number;
}

const DEFAULT_POLICY: DecisionPolicy = { minRequeueMs: DEFAULT_MIN_REQUEUE_MS };

/** The one place where the facts of a reconcile become a queue step, an outcome, events and health. */
export function decide(facts: CallFacts, policy?: DecisionPolicy): CallDecision;
export function decide(facts: ReconcileFacts, policy?: DecisionPolicy): ReconcileDecision;
export function decide(facts: ReconcileFacts, policy: DecisionPolicy = DEFAULT_POLICY): ReconcileDecision {
  switch (facts.stage) {
    case 'expectations-pending':
      // Child events re-enqueue the owner as the watch catches up; the timer covers a watch that never does.
      return {
        step: { kind: 'requeue-after', delayMs: facts.remainingMs + 10 },
        log: { level: 'debug', message: 'waiting for the watch to see earlier creates/deletes' },
      };
    case 'own-write-seen':
      return { step: { kind: 'forget' } };
    case 'replay-pending':
      // As after the conflict itself: the backoff brings the key back, since a change the function never
      // sees does not enqueue it; the kept answer gives up after a bounded number of these.
      return { step: { kind: 'backoff' }, log: { level: 'debug', message: 'cache not caught up with the conflicting write; answer kept' } };
    case 'finalizer-added':
      return decideFinalizerAdded(facts.applied);
    case 'call-failed':
      return decideCallFailed(facts.call, policy);
    case 'requires-failed':
      // Retried with backoff: RBAC may be granted, the required objects may change.
      return callFailure({ kind: 'backoff' }, 'error', facts.reason, `${facts.message} (nothing was applied)`);
    case 'applied':
      return { ...decideApplied(facts, policy), health: { ready: true, reason: 'Running', message: `last call answered in ${Math.round(facts.callMs)} ms` } };
  }
}

function decideFinalizerAdded(applied: ApplyOutcome): ReconcileDecision {
  if (applied.result === 'done') return { step: { kind: 'wait' } };
  if (applied.result === 'conflict') return { step: { kind: 'backoff' } };
  return { step: { kind: 'backoff' }, log: { level: 'warn', message: 'could not add finalizer', fields: { err: applied.message } } };
}

function decideCallFailed(call: Exclude<DispatchResult, { kind: 'ok' }>, policy: DecisionPolicy): CallDecision {
  if (call.kind === 'throttled') {
    return {
      step: call.retryAfterMs === undefined ? { kind: 'backoff' } : { kind: 'requeue-after', delayMs: flooredDelayMs(call.retryAfterMs, policy.minRequeueMs) },
      outcome: 'throttled',
      log: { level: 'info', message: 'function throttled the call (429)', fields: { retryAfterMs: call.retryAfterMs, ...detailOf(call) } },
    };
  }
  if (call.kind === 'rejected') {
    // The function says the request is wrong: resending it unchanged would fail the same way.
    return callFailure({ kind: 'forget' }, 'rejected', 'FunctionRejected', call.message, detailOf(call));
  }
  const passedOn = ['InvalidResponse', 'InvalidSignature', 'AddressRefused', 'Overloaded'] as const;
  const reason: LoopHealthReason = (passedOn as readonly string[]).includes(call.reason) ? (call.reason as (typeof passedOn)[number]) : 'FunctionUnreachable';
  return callFailure({ kind: 'backoff' }, 'error', reason, call.message, detailOf(call));
}

/** A reply body goes to the log only: status conditions and events carry the status and a fixed reason. */
const detailOf = (call: { detail?: string }): { body?: string } => (call.detail ? { body: call.detail.slice(0, 300) } : {});

function callFailure(step: QueueStep, outcome: ReconcileOutcome, reason: LoopHealthReason, message: string, logOnly: { body?: string } = {}): CallDecision {
  return {
    step,
    outcome,
    warning: { reason, message },
    health: { ready: false, reason, message },
    log: { level: 'sampled', message: 'function call failed', fields: { reason, message, ...logOnly } },
  };
}

function decideApplied(facts: Extract<CallFacts, { stage: 'applied' }>, policy: DecisionPolicy): CallDecision {
  const asked = (seconds: number) => flooredDelayMs(seconds * 1000, policy.minRequeueMs);
  const { applied, response, deleted } = facts;
  if (applied.result === 'conflict') {
    // Our view was stale: retry once the cache has moved on, after a short backoff (5 ms, doubling), never a hot loop.
    return { step: { kind: 'backoff' }, outcome: 'conflict', log: { level: 'debug', message: 'conflict; requeued', fields: { message: applied.message } } };
  }
  if (applied.result === 'failed') {
    return {
      step: applied.retryable ? { kind: 'backoff' } : { kind: 'forget' },
      outcome: 'action-error',
      warning: { reason: 'ActionFailed', message: applied.message },
      log: { level: 'warn', message: 'applying actions failed', fields: { message: applied.message } },
    };
  }
  const dropTombstone = deleted ? { dropTombstone: true } : {};
  if (response.error) {
    const { type, message, retryAfterSeconds } = response.error;
    const step: QueueStep =
      type === 'permanent' ? { kind: 'forget' } : retryAfterSeconds === undefined ? { kind: 'backoff' } : { kind: 'requeue-after', delayMs: asked(retryAfterSeconds) };
    return {
      step,
      outcome: 'function-error',
      warning: { reason: 'ReconcileError', message },
      log: { level: 'warn', message: 'function reported an error', fields: { errorType: type, message } },
      ...dropTombstone,
    };
  }
  // A deleted primary has nothing left to call again about.
  const step: QueueStep =
    response.requeueAfterSeconds === undefined || deleted ? { kind: 'forget' } : { kind: 'forget-and-requeue-after', delayMs: asked(response.requeueAfterSeconds) };
  return { step, outcome: 'ok', ...dropTombstone };
}
