// One reconcile of one primary: expectations and finalizer first, then dispatch (HTTP) and apply, and
// finally the pure decision (reconcile-decision.ts) carried out: the one place that moves the queue.
import type { KubeObject, RequiredResource, Trigger } from '../../lib/contract/types.ts';
import { reconcileLogger } from '../../lib/observability/logger.ts';
import { applyActions, type ApplyContext, type RouterAction } from '../apply/apply-actions.ts';
import { callFunction } from './call-rounds.ts';
import { keepsAnswer, type KeptAnswer } from './conflict-replay.ts';
import { answerCoversOwnWrite } from './own-writes.ts';
import { selectsPrimary } from '../base/predicates.ts';
import { decide, finalizerPhase, reconcileResult, writesFor, type QueueStep, type CallDecision, type DecisionPolicy, type ReconcileDecision } from './reconcile-decision.ts';
import { DEFAULT_MIN_REQUEUE_MS } from './requeue-floor.ts';
import { type ReconcileResult } from '../base/router-metrics.ts';
import type { QueueItem, WorkQueue } from '../base/work-queue.ts';
import type { WatchEvent } from '../base/watch-events.ts';
import { ReconcileTrace } from './reconcile-trace.ts';
import { tenantOf } from '../base/tenant-weights.ts';
import type { SettledRequirements } from './required-objects.ts';
import { ALONE, type WorkerShare } from '../base/worker-turns.ts';
import type { KeyMemory, LoopCaches, ReconcileDeps, ReconcileScope } from './reconcile-scope.ts';

/** What intake knows of a key besides its queue item. */
export interface KeyContext {
  /** The watch events that queued it (the flight recorder's). */
  events?: readonly WatchEvent[];
  /** What the primary's function required in its last settled answer: the first round reads them. */
  required?: readonly RequiredResource[] | undefined;
  /** The other keys its worker carries (work-queue.ts, groupMax): the writes take turns with theirs. */
  share?: WorkerShare;
}

/** One reconcile's outcome: controller-runtime's result label, and the requirements its function settled on. */
export interface KeyOutcome {
  /** undefined: nothing to do, a success. */
  result?: ReconcileResult;
  /** The function's settled answer required these ([]: nothing now); absent: what was required is unchanged. */
  required?: SettledRequirements;
}

type Log = ReturnType<typeof reconcileLogger>;

const REQUEUE: Trigger = { type: 'REQUEUE' };

/**
 * Reconciles one key: the outcome's result is controller-runtime's label, and its `required` what the
 * function's settled answer required, for the runner to keep (reconcile writes nothing of intake's).
 */
export async function reconcileKey(scope: ReconcileScope, item: QueueItem<Trigger>, context: KeyContext = {}): Promise<KeyOutcome> {
  const { loop, deps, caches, memory } = scope;
  const key = item.key;
  const cached = caches.primaries.get(key);
  const primary: KubeObject | undefined = cached ?? (loop.sendDeletes ? memory.tombstones.get(key) : undefined);
  if (!primary || !selectsPrimary(loop, primary)) return {};
  // A function named by spec.function.ref that does not resolve gets nothing; it is sent everything again
  // once it resolves (LoopRunner), and the Loop's Ready condition says why meanwhile.
  const url = scope.function.url();
  if (url === undefined) return {};
  const deleted = cached === undefined;
  const trigger: Trigger = deleted ? { type: 'DELETED' } : item.payload;
  const traced = new ReconcileTrace(loop.id, key, context.events ?? [], item.enqueuedAt, deps.history);
  const log = reconcileLogger(deps.logger, { loop: loop.id, key, traceId: traced.traceId });

  if (!deleted && !memory.expectations.satisfied(key, caches.lookupChild)) {
    return { result: carryOut(scope, key, primary, decide({ stage: 'expectations-pending', remainingMs: memory.expectations.remainingMs(key) ?? 0 }), log, traced, 'expectations-pending') };
  }
  const phase = finalizerPhase(loop, primary, deleted);
  if (phase.kind === 'skip') {
    traced.finish('skipped', 'none');
    return {};
  }
  if (phase.kind === 'add-finalizer') {
    // Add the finalizer and stop: its own watch event brings the primary back with the new resourceVersion.
    const applied = await inTurn(context.share, () => applyActions(applyContext(scope, key, primary, log, traced), [{ op: 'finalizer', patch: phase.patch }]));
    return { result: carryOut(scope, key, primary, decide({ stage: 'finalizer-added', applied }), log, traced, 'finalizer-added') };
  }

  // Consumed on every reconcile: the entry only ever answers for the event that follows our write.
  if (memory.ownWrites.consume(key, deleted ? undefined : primary.metadata?.resourceVersion)) {
    // The object is exactly what the function's last answer produced: it has answered for it already.
    deps.metrics.ownWriteSkips.inc({ loop: loop.id });
    return { result: carryOut(scope, key, primary, decide({ stage: 'own-write-seen' }), log, traced, 'own-write-seen') };
  }

  const replay = memory.replays.take(key, cached);
  if (replay === 'wait') return { result: carryOut(scope, key, primary, decide({ stage: 'replay-pending' }), log, traced, 'replay-pending') };
  const answered: Answered = { key, primary, deleted, finalizing: phase.finalizing, traced, share: context.share };
  if (replay) {
    // The function's last answer was for this very object but for resourceVersion/managedFields.
    deps.metrics.conflictReplays.inc({ loop: loop.id });
    traced.replayed(replay.response.actions ?? []);
    const started = performance.now();
    return { result: finish(scope, answered, await applyAnswer(scope, answered, replay, log), started, log, { trigger: trigger.type, replayed: true }) };
  }

  const started = performance.now();
  const call = await callFunction(scope, { key, primary, trigger, finalizing: phase.finalizing, url, required: context.required, traced });
  const rlog = call.request ? reconcileLogger(log, { reconcileId: call.request.reconcileId }) : log;
  if (call.kind === 'requires-failed') {
    return { result: finish(scope, answered, decide({ stage: 'requires-failed', reason: call.reason, message: call.message }, policy(deps)), started, rlog, { trigger: trigger.type }) };
  }
  const { request, result, callMs, required } = call;

  let decision: CallDecision;
  if (result.kind === 'ok') {
    deps.recorder?.record(request, result.response);
    decision = await applyAnswer(scope, answered, { response: result.response, callMs, answeredAt: Date.now() }, rlog);
  } else {
    decision = decide({ stage: 'call-failed', call: result }, policy(deps));
  }
  return { result: finish(scope, answered, decision, started, rlog, { trigger: trigger.type, callMs: Math.round(callMs) }), ...(required ? { required } : {}) };
}

/** The reconcile an answer belongs to. */
interface Answered {
  key: string;
  primary: KubeObject;
  deleted: boolean;
  finalizing: boolean;
  traced: ReconcileTrace;
  share?: WorkerShare | undefined;
}

/** What carrying a decision out moves: the queue, the tombstones, events and health. */
type CarryScope = Pick<ReconcileScope, 'loop' | 'deps' | 'queue'> & { memory: Pick<KeyMemory, 'tombstones'> };
/** What the write path takes: the cached objects (authority checks) and the expectations it records. */
type ApplyScope = Pick<ReconcileScope, 'loop' | 'deps'> & { caches: Pick<LoopCaches, 'lookup'>; memory: Pick<KeyMemory, 'expectations'> };

/**
 * Applies an answer (fresh or kept) to the primary, remembers what it wrote or keeps it after a conflict, and
 * decides; in its turn when its worker carries other keys.
 */
function applyAnswer(
  scope: ApplyScope & { memory: Pick<KeyMemory, 'ownWrites' | 'replays'> },
  at: Answered,
  answer: Omit<KeptAnswer, 'primary' | 'staleRetries' | 'seenChanged'>,
  log: Log,
): Promise<CallDecision> {
  // The object may have moved while the answer waited, as it may during any write's round trip: the writes test
  // what the function was given (resourceVersion tests, seen metadata) and a change queued the key to run again.
  return inTurn(at.share, async () => {
    const { loop, deps, memory } = scope;
    const { key, primary, deleted, finalizing } = at;
    const { response, callMs } = answer;
    const writes: RouterAction[] = writesFor(response, { primary, finalizer: loop.finalizer, deleted, finalizing });
    const applied = await applyActions(applyContext(scope, key, primary, log, at.traced), writes);
    const written = applied.result === 'done' && applied.refused === 0 ? applied.primaryResourceVersion : undefined;
    // A write the server found to change nothing keeps the version the function saw: no watch event follows it.
    if (written && written !== primary.metadata?.resourceVersion && answerCoversOwnWrite(loop, primary, response, at)) {
      memory.ownWrites.remember(key, written);
    }
    if (keepsAnswer(loop, primary, response, applied, at)) memory.replays.keep(key, { ...answer, primary, seenChanged: loop.metadataOnly });
    return decide({ stage: 'applied', response, applied, deleted, callMs }, policy(deps));
  });
}

/** Carries out the decision of a reconcile that called the function or re-applied its answer. */
function finish(scope: CarryScope, at: Answered, decision: CallDecision, started: number, log: Log, fields: Record<string, unknown>): ReconcileResult {
  const queueResult = carryOut(scope, at.key, at.primary, decision, log, at.traced, decision.outcome);
  scope.deps.metrics.reconcileDuration.observe({ loop: scope.loop.id, result: decision.outcome }, (performance.now() - started) / 1000, at.traced.traceId);
  log.debug({ ...fields, outcome: decision.outcome }, 'reconciled');
  return queueResult;
}

/** Runs the writes when the key's worker gives it the turn: at once for a key alone. */
function inTurn<R>(share: WorkerShare | undefined, write: () => Promise<R>): Promise<R> {
  return (share ?? ALONE).inTurn(write);
}

function policy(deps: Pick<ReconcileDeps, 'minRequeueMs'>): DecisionPolicy {
  return { minRequeueMs: deps.minRequeueMs ?? DEFAULT_MIN_REQUEUE_MS };
}

function applyContext(scope: ApplyScope, key: string, primary: KubeObject, logger: Log, traced: ReconcileTrace): ApplyContext {
  const { deps } = scope;
  return {
    client: deps.client,
    discovery: deps.discovery,
    loop: scope.loop,
    primary,
    ownerKey: key,
    lookup: scope.caches.lookup,
    expectations: scope.memory.expectations,
    events: deps.events,
    metrics: deps.metrics,
    logger,
    writes: traced,
  };
}

/** Carries a decision out: the queue step first (its backoff delay is reported), then tombstone, event, health, log. */
function carryOut(scope: CarryScope, key: string, primary: KubeObject, decision: ReconcileDecision, log: Log, traced: ReconcileTrace, outcome: string): ReconcileResult {
  const retryInMs = applyQueueStep(scope.queue, key, decision.step);
  traced.finish(outcome, decision.step.kind);
  if (decision.dropTombstone) scope.memory.tombstones.delete(key);
  // The retry delay stays out of the event message so repeated failures deduplicate.
  if (decision.warning) scope.deps.events.record(primary, { type: 'Warning', ...decision.warning }, { tenant: tenantOf(scope.loop), source: 'router' });
  if (decision.health) {
    const { health } = decision;
    scope.deps.onHealth?.(scope.loop.id, retryInMs === undefined ? health : { ...health, message: `${health.message} (retry in ${retryInMs} ms)` });
  }
  if (decision.log) {
    const { level, message, fields } = decision.log;
    const failures = scope.queue.failures(key);
    const retry = retryInMs === undefined ? {} : { retryInMs };
    if (level === 'sampled') log[failures <= 2 || failures % 10 === 0 ? 'warn' : 'debug']({ ...fields, ...retry, failures }, message);
    else log[level]({ ...fields, ...retry }, message);
  }
  return reconcileResult(decision.step);
}

/** Moves the queue as the step says; returns the backoff delay when the step backs off. */
export function applyQueueStep(queue: WorkQueue<Trigger>, key: string, step: QueueStep): number | undefined {
  switch (step.kind) {
    case 'forget':
      queue.forget(key);
      return undefined;
    case 'forget-and-requeue-after':
      queue.forget(key);
      queue.addAfter(key, REQUEUE, step.delayMs);
      return undefined;
    case 'requeue-after':
      queue.addAfter(key, REQUEUE, step.delayMs);
      return undefined;
    case 'backoff':
      return queue.addRateLimited(key, REQUEUE);
    case 'wait':
      return undefined;
  }
}
