// One reconcile of one primary: expectations and finalizer first, then dispatch (HTTP) and apply, and
// finally the pure decision (reconcile-decision.ts) carried out: the one place that moves the queue.
import type { Logger } from 'pino';
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { reconcileLogger } from '../../lib/observability/logger.ts';
import { applyActions, type ApplyContext, type RouterAction } from '../apply/apply-actions.ts';
import type { OwnedStore } from '../../lib/reconcile/build-request.ts';
import { callFunction, type RequestLimits, type Requirements } from './call-rounds.ts';
import type { RelatedStore } from './related-objects.ts';
import type { FunctionInvoker } from './dispatch.ts';
import type { EventRecorder } from '../apply/event-recorder.ts';
import type { CacheLookup, Expectations } from '../apply/expectations.ts';
import type { FixtureRecorder } from './fixture-recorder.ts';
import type { StoreView } from '../base/informer-view.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { keepsAnswer, type ConflictReplays, type KeptAnswer } from './conflict-replay.ts';
import { answerCoversOwnWrite, type OwnWrites } from './own-writes.ts';
import { selectsPrimary } from '../base/predicates.ts';
import { decide, finalizerPhase, reconcileResult, writesFor, type LoopHealth, type QueueStep, type CallDecision, type DecisionPolicy, type ReconcileDecision } from './reconcile-decision.ts';
import { DEFAULT_MIN_REQUEUE_MS } from './requeue-floor.ts';
import { type ReconcileResult, type RouterMetrics } from '../base/router-metrics.ts';
import type { QueueItem, WorkQueue } from '../base/work-queue.ts';
import type { WatchEvent } from '../base/watch-events.ts';
import type { FlightRecorder } from './flight-recorder.ts';
import { ReconcileTrace } from './reconcile-trace.ts';
import type { FunctionVersions } from './function-versions.ts';
import { tenantOf } from '../base/tenant-weights.ts';

/** What a reconcile needs from the world outside its Loop. */
export interface ReconcileDeps extends RequestLimits {
  client: KubeClient;
  discovery: ResourceDiscovery;
  invoke: FunctionInvoker;
  events: EventRecorder;
  metrics: RouterMetrics;
  logger: Logger;
  recorder?: FixtureRecorder;
  /** Floor on the delays a function asks for (requeueAfterSeconds, retryAfterSeconds, Retry-After); 1 s by default. */
  minRequeueMs?: number;
  /** The per-object flight recorder (kubeloop history); none: nothing is recorded. */
  history?: FlightRecorder;
  /** Reports the Loop's health whenever a call succeeds or fails; the Loop controller writes conditions. */
  onHealth?: (loop: string, health: LoopHealth) => void;
}

/** One Loop's state as its runner lends it to reconcileKey. */
export interface ReconcileScope {
  loop: LoopConfig;
  deps: ReconcileDeps;
  queue: WorkQueue<Trigger>;
  expectations: Expectations;
  /** Last state of deleted primaries, kept only for Loops with sendDeletes until the call is made. */
  tombstones: Map<string, KubeObject>;
  ownWrites: OwnWrites;
  /** Answers kept after their writes conflicted, re-applied when only bookkeeping changed. */
  replays: ConflictReplays;
  primaries: StoreView;
  owned: readonly OwnedStore[];
  /** The caches of the Loop's spec.related kinds. */
  related: readonly RelatedStore[];
  /** What each primary's function required in its last settled answer (call-rounds.ts). */
  requirements: Requirements;
  lookup: ApplyContext['lookup'];
  lookupChild: CacheLookup;
  /** Where calls go now: spec.function.url, or what spec.function.ref resolves to (undefined: send nothing). */
  functionUrl: () => string | undefined;
  /** The Loop's shadow and canary, when it has either. */
  versions?: FunctionVersions;
  /** The Loop's batching invoker (call-batcher.ts); deps.invoke when its calls are not batched. */
  invoke?: FunctionInvoker | undefined;
}

type Log = ReturnType<typeof reconcileLogger>;

const REQUEUE: Trigger = { type: 'REQUEUE' };

/** Reconciles one key; returns controller-runtime's result label (undefined: nothing to do, a success). */
export async function reconcileKey(scope: ReconcileScope, item: QueueItem<Trigger>, events: readonly WatchEvent[] = []): Promise<ReconcileResult | undefined> {
  const { loop, deps, expectations } = scope;
  const key = item.key;
  const cached = scope.primaries.get(key);
  const primary: KubeObject | undefined = cached ?? (loop.sendDeletes ? scope.tombstones.get(key) : undefined);
  if (!primary || !selectsPrimary(loop, primary)) return;
  // A function named by spec.function.ref that does not resolve gets nothing; it is sent everything again
  // once it resolves (LoopRunner), and the Loop's Ready condition says why meanwhile.
  const url = scope.functionUrl();
  if (url === undefined) return;
  const deleted = cached === undefined;
  const trigger: Trigger = deleted ? { type: 'DELETED' } : item.payload;
  const traced = new ReconcileTrace(loop.id, key, events, item.enqueuedAt, deps.history);
  const log = reconcileLogger(deps.logger, { loop: loop.id, key, traceId: traced.traceId });

  if (!deleted && !expectations.satisfied(key, scope.lookupChild)) {
    return carryOut(scope, key, primary, decide({ stage: 'expectations-pending', remainingMs: expectations.remainingMs(key) ?? 0 }), log, traced, 'expectations-pending');
  }
  const phase = finalizerPhase(loop, primary, deleted);
  if (phase.kind === 'skip') {
    traced.finish('skipped', 'none');
    return;
  }
  if (phase.kind === 'add-finalizer') {
    // Add the finalizer and stop: its own watch event brings the primary back with the new resourceVersion.
    const applied = await applyActions(applyContext(scope, key, primary, log, traced), [{ op: 'finalizer', patch: phase.patch }]);
    return carryOut(scope, key, primary, decide({ stage: 'finalizer-added', applied }), log, traced, 'finalizer-added');
  }

  // Consumed on every reconcile: the entry only ever answers for the event that follows our write.
  if (scope.ownWrites.consume(key, deleted ? undefined : primary.metadata?.resourceVersion)) {
    // The object is exactly what the function's last answer produced: it has answered for it already.
    deps.metrics.ownWriteSkips.inc({ loop: loop.id });
    return carryOut(scope, key, primary, decide({ stage: 'own-write-seen' }), log, traced, 'own-write-seen');
  }

  const replay = scope.replays.take(key, cached);
  if (replay === 'wait') return carryOut(scope, key, primary, decide({ stage: 'replay-pending' }), log, traced, 'replay-pending');
  const answered: Answered = { key, primary, deleted, finalizing: phase.finalizing, traced };
  if (replay) {
    // The function's last answer was for this very object but for resourceVersion/managedFields.
    deps.metrics.conflictReplays.inc({ loop: loop.id });
    traced.replayed(replay.response.actions ?? []);
    const started = performance.now();
    return finish(scope, answered, await applyAnswer(scope, answered, replay, log), started, log, { trigger: trigger.type, replayed: true });
  }

  const started = performance.now();
  const call = await callFunction(scope, { key, primary, trigger, finalizing: phase.finalizing, url, traced });
  const rlog = call.request ? reconcileLogger(log, { reconcileId: call.request.reconcileId }) : log;
  if (call.kind === 'requires-failed') {
    return finish(scope, answered, decide({ stage: 'requires-failed', reason: call.reason, message: call.message }, policy(deps)), started, rlog, { trigger: trigger.type });
  }
  const { request, result, callMs } = call;

  let decision: CallDecision;
  if (result.kind === 'ok') {
    deps.recorder?.record(request, result.response);
    decision = await applyAnswer(scope, answered, { response: result.response, callMs, answeredAt: Date.now() }, rlog);
  } else {
    decision = decide({ stage: 'call-failed', call: result }, policy(deps));
  }
  return finish(scope, answered, decision, started, rlog, { trigger: trigger.type, callMs: Math.round(callMs) });
}

/** The reconcile an answer belongs to. */
interface Answered {
  key: string;
  primary: KubeObject;
  deleted: boolean;
  finalizing: boolean;
  traced: ReconcileTrace;
}

/** Applies an answer (fresh or kept) to the primary, remembers what it wrote or keeps it after a conflict, and decides. */
async function applyAnswer(scope: ReconcileScope, at: Answered, answer: Omit<KeptAnswer, 'primary' | 'staleRetries'>, log: Log): Promise<CallDecision> {
  const { loop, deps } = scope;
  const { key, primary, deleted, finalizing } = at;
  const { response, callMs } = answer;
  const writes: RouterAction[] = writesFor(response, { primary, finalizer: loop.finalizer, deleted, finalizing });
  const applied = await applyActions(applyContext(scope, key, primary, log, at.traced), writes);
  const written = applied.result === 'done' && applied.refused === 0 ? applied.primaryResourceVersion : undefined;
  // A write the server found to change nothing keeps the version the function saw: no watch event follows it.
  if (written && written !== primary.metadata?.resourceVersion && answerCoversOwnWrite(loop, primary, response, at)) {
    scope.ownWrites.remember(key, written);
  }
  if (keepsAnswer(loop, primary, response, applied, at)) scope.replays.keep(key, { ...answer, primary });
  return decide({ stage: 'applied', response, applied, deleted, callMs }, policy(deps));
}

/** Carries out the decision of a reconcile that called the function or re-applied its answer. */
function finish(scope: ReconcileScope, at: Answered, decision: CallDecision, started: number, log: Log, fields: Record<string, unknown>): ReconcileResult {
  const queueResult = carryOut(scope, at.key, at.primary, decision, log, at.traced, decision.outcome);
  scope.deps.metrics.reconcileDuration.observe({ loop: scope.loop.id, result: decision.outcome }, (performance.now() - started) / 1000, at.traced.traceId);
  log.debug({ ...fields, outcome: decision.outcome }, 'reconciled');
  return queueResult;
}

function policy(deps: ReconcileDeps): DecisionPolicy {
  return { minRequeueMs: deps.minRequeueMs ?? DEFAULT_MIN_REQUEUE_MS };
}

function applyContext(scope: ReconcileScope, key: string, primary: KubeObject, logger: Log, traced: ReconcileTrace): ApplyContext {
  const { deps } = scope;
  return {
    client: deps.client,
    discovery: deps.discovery,
    loop: scope.loop,
    primary,
    ownerKey: key,
    lookup: scope.lookup,
    expectations: scope.expectations,
    events: deps.events,
    metrics: deps.metrics,
    logger,
    writes: traced,
  };
}

/** Carries a decision out: the queue step first (its backoff delay is reported), then tombstone, event, health, log. */
function carryOut(scope: ReconcileScope, key: string, primary: KubeObject, decision: ReconcileDecision, log: Log, traced: ReconcileTrace, outcome: string): ReconcileResult {
  const retryInMs = applyQueueStep(scope.queue, key, decision.step);
  traced.finish(outcome, decision.step.kind);
  if (decision.dropTombstone) scope.tombstones.delete(key);
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
