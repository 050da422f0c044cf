// One reconcile of one primary: expectations and finalizers first, then dispatch (HTTP) and apply, and
// finally what the queue should do next (forget, requeue at once, back off, wait, or leave alone).
import type { JsonPatchOperation, KubeObject, ReconcileResponse, Trigger } from '../lib/contract/types.ts';
import { reconcileLogger } from '../lib/observability/logger.ts';
import { objectPath } from '../lib/kube/resource-paths.ts';
import { applyActions, isConflict, sendJsonPatch } from './apply-actions.ts';
import { buildRequest } from './build-request.ts';
import type { DispatchResult } from './dispatch.ts';
import type { LoopHealthReason, LoopRunner } from './loop-runner.ts';
import { addFinalizerPatch, hasFinalizer, removeFinalizerPatch } from './patch-building.ts';
import { answerCoversOwnWrite } from './own-writes.ts';
import { selectsPrimary } from './predicates.ts';
import { DEFAULT_MIN_REQUEUE_MS, flooredDelayMs } from './requeue-floor.ts';
import { callCode } from './router-metrics.ts';
import type { QueueItem } from './work-queue.ts';

export async function reconcileKey(runner: LoopRunner, item: QueueItem<Trigger>): Promise<void> {
  const { loop, deps, queue, expectations } = runner;
  const key = item.key;
  const tombstone = runner.tombstones.get(key);
  const cached = runner.primaryInformer.store.get(key);
  const primary: KubeObject | undefined = cached ?? (loop.sendDeletes ? tombstone : undefined);
  if (!primary || !selectsPrimary(loop, primary)) return;
  // A function named by spec.function.ref that does not resolve gets nothing; it is sent everything again
  // once it resolves (LoopRunner), and the Loop's Ready condition says why meanwhile.
  const url = runner.functionUrl;
  if (url === undefined) return;
  const deleted = cached === undefined;
  const trigger: Trigger = deleted ? { type: 'DELETED' } : item.payload;
  const log = reconcileLogger(deps.logger, { loop: loop.name, key });

  if (!deleted && !expectations.satisfied(key, (kind, childKey) => runner.lookupChild(kind, childKey))) {
    // Child events re-enqueue the owner as the watch catches up; the timer covers a watch that never does.
    queue.addAfter(key, { type: 'REQUEUE' }, (expectations.remainingMs(key) ?? 0) + 10);
    log.debug({ trigger: trigger.type }, 'waiting for the watch to see earlier creates/deletes');
    return;
  }

  const deleting = !deleted && primary.metadata?.deletionTimestamp !== undefined;
  let finalizing = false;
  if (loop.finalize && !deleted) {
    const held = hasFinalizer(primary, loop.finalizer);
    if (!deleting && !held) {
      // Add the finalizer and stop: its own watch event brings the primary back with the new resourceVersion.
      await writeOrRequeue(runner, primary, addFinalizerPatch(primary, loop.finalizer), 'add finalizer');
      return;
    }
    if (deleting && !held) return;
    finalizing = deleting;
  } else if (deleting && !loop.sendDeletes) {
    return;
  }

  // Consumed on every reconcile: the entry only ever answers for the event that follows our write.
  if (runner.ownWrites.consume(key, deleted ? undefined : primary.metadata?.resourceVersion)) {
    // The object is exactly what the function's last answer produced: it has answered for it already.
    queue.forget(key);
    deps.metrics.ownWriteSkips.inc({ loop: loop.name });
    return;
  }

  const request = buildRequest({ loop: loop.name, primary, owned: runner.ownedStores, trigger, finalizing });
  const rlog = reconcileLogger(log, { reconcileId: request.reconcileId });
  const started = performance.now();
  const result = await deps.invoke(request, { url, timeoutMs: loop.timeoutMs, signingKey: loop.signingKey, caBundle: loop.caBundle });
  const callSeconds = (performance.now() - started) / 1000;
  deps.metrics.functionLatency.observe({ loop: loop.name }, callSeconds);
  deps.metrics.functionCalls.inc({ loop: loop.name, code: callCode(result.kind, result.status, result.kind === 'failed' ? result.reason : undefined) });

  let outcome: string;
  if (result.kind === 'ok') {
    deps.recorder?.record(request, result.response);
    outcome = await handleResponse(runner, primary, result.response, { deleted, finalizing, log: rlog });
    if (outcome !== 'error') runner.deps.onHealth?.(loop.name, { ready: true, reason: 'Running', message: `last call answered in ${Math.round(callSeconds * 1000)} ms` });
  } else {
    outcome = handleCallFailure(runner, primary, result, rlog);
  }
  deps.metrics.reconcileDuration.observe({ loop: loop.name, result: outcome }, (performance.now() - started) / 1000);
  rlog.debug({ trigger: trigger.type, outcome, callMs: Math.round(callSeconds * 1000) }, 'reconciled');
}

type Log = ReturnType<typeof reconcileLogger>;

async function handleResponse(
  runner: LoopRunner,
  primary: KubeObject,
  response: ReconcileResponse,
  ctx: { deleted: boolean; finalizing: boolean; log: Log },
): Promise<string> {
  const { loop, deps, queue } = runner;
  const key = keyOf(primary);
  // A deleted primary has no status to write; everything else still applies.
  const actions = ctx.deleted ? response.actions.filter((a) => a.op !== 'status') : response.actions;
  const applied = await applyActions(
    {
      client: deps.client,
      discovery: deps.discovery,
      loop,
      primary,
      ownerKey: key,
      lookup: (apiVersion, kind, namespace, name) => runner.lookup(apiVersion, kind, namespace, name),
      expectations: runner.expectations,
      events: deps.events,
      metrics: deps.metrics,
      logger: ctx.log,
    },
    actions,
  );
  if (applied.result === 'conflict') {
    // Our view was stale: try again as soon as the cache has moved on (short backoff, no hot loop).
    queue.addRateLimited(key, { type: 'REQUEUE' });
    ctx.log.debug({ message: applied.message }, 'conflict; requeued');
    return 'conflict';
  }
  if (applied.result === 'failed') {
    ctx.log.warn({ message: applied.message }, 'applying actions failed');
    deps.events.record(primary, { type: 'Warning', reason: 'ActionFailed', message: applied.message });
    if (applied.retryable) queue.addRateLimited(key, { type: 'REQUEUE' });
    else queue.forget(key);
    return 'action-error';
  }
  if (response.finalized && ctx.finalizing) {
    const patch = removeFinalizerPatch(primary, loop.finalizer);
    if (patch && !(await writeOrRequeue(runner, primary, patch, 'remove finalizer'))) return 'conflict';
  }
  if (ctx.deleted) runner.tombstones.delete(key);
  if (applied.primaryResourceVersion && applied.refused === 0 && answerCoversOwnWrite(loop, primary, response, ctx)) {
    runner.ownWrites.remember(key, applied.primaryResourceVersion);
  }
  if (response.error) {
    const { type, message, retryAfterSeconds } = response.error;
    deps.events.record(primary, { type: 'Warning', reason: 'ReconcileError', message });
    ctx.log.warn({ errorType: type, message }, 'function reported an error');
    if (type === 'temporary') {
      if (retryAfterSeconds !== undefined) queue.addAfter(key, { type: 'REQUEUE' }, flooredDelayMs(retryAfterSeconds * 1000, minRequeueMs(runner)));
      else queue.addRateLimited(key, { type: 'REQUEUE' });
    } else {
      queue.forget(key);
    }
    return 'function-error';
  }
  queue.forget(key);
  if (response.requeueAfterSeconds !== undefined && !ctx.deleted) {
    queue.addAfter(key, { type: 'REQUEUE' }, flooredDelayMs(response.requeueAfterSeconds * 1000, minRequeueMs(runner)));
  }
  return 'ok';
}

function handleCallFailure(runner: LoopRunner, primary: KubeObject, result: Exclude<DispatchResult, { kind: 'ok' }>, log: Log): string {
  const { queue } = runner;
  const key = keyOf(primary);
  if (result.kind === 'throttled') {
    if (result.retryAfterMs !== undefined) queue.addAfter(key, { type: 'REQUEUE' }, flooredDelayMs(result.retryAfterMs, minRequeueMs(runner)));
    else queue.addRateLimited(key, { type: 'REQUEUE' });
    log.info({ retryAfterMs: result.retryAfterMs }, 'function throttled the call (429)');
    return 'throttled';
  }
  if (result.kind === 'rejected') {
    // The function says the request is wrong: resending it unchanged would fail the same way.
    queue.forget(key);
    report(runner, primary, 'FunctionRejected', result.message, log);
    return 'rejected';
  }
  const delay = queue.addRateLimited(key, { type: 'REQUEUE' });
  const reason: LoopHealthReason = result.reason === 'InvalidResponse' || result.reason === 'InvalidSignature' ? result.reason : 'FunctionUnreachable';
  report(runner, primary, reason, `${result.message} (retry in ${delay} ms)`, log);
  return 'error';
}

function report(runner: LoopRunner, primary: KubeObject, reason: LoopHealthReason, message: string, log: Log): void {
  // A function that stays down fails every key again and again: warn on the first failures of a key and
  // then every tenth, so the log shows the outage without one line per key per retry.
  const failures = runner.queue.failures(keyOf(primary));
  const level = failures <= 2 || failures % 10 === 0 ? 'warn' : 'debug';
  log[level]({ reason, message, failures }, 'function call failed');
  // The retry delay stays out of the event message so repeated failures deduplicate.
  runner.deps.events.record(primary, { type: 'Warning', reason, message: message.replace(/ \(retry in \d+ ms\)$/, '') });
  runner.deps.onHealth?.(runner.loop.name, { ready: false, reason, message });
}

/** Sends a JSON patch to the primary; on a conflict requeues and returns false. */
async function writeOrRequeue(runner: LoopRunner, primary: KubeObject, patch: JsonPatchOperation[], what: string): Promise<boolean> {
  const { deps, queue } = runner;
  const key = keyOf(primary);
  try {
    const resource = await deps.discovery.resolve(primary.apiVersion ?? '', primary.kind ?? '');
    const cachedRv = () => runner.lookup(primary.apiVersion ?? '', primary.kind ?? '', primary.metadata?.namespace, primary.metadata?.name ?? '')?.metadata?.resourceVersion;
    await sendJsonPatch(deps.client, objectPath(resource, primary.metadata?.name ?? '', primary.metadata?.namespace), patch, cachedRv);
    deps.metrics.actions.inc({ loop: runner.loop.name, op: 'finalizer', result: 'applied' });
    return true;
  } catch (error) {
    const conflict = isConflict(error);
    deps.metrics.actions.inc({ loop: runner.loop.name, op: 'finalizer', result: conflict ? 'conflict' : 'error' });
    if (!conflict) deps.logger.warn({ loop: runner.loop.name, key, err: (error as Error).message }, `could not ${what}`);
    queue.addRateLimited(key, { type: 'REQUEUE' });
    return false;
  }
}

function minRequeueMs(runner: LoopRunner): number {
  return runner.deps.minRequeueMs ?? DEFAULT_MIN_REQUEUE_MS;
}

function keyOf(object: KubeObject): string {
  const m = object.metadata;
  return m?.namespace ? `${m.namespace}/${m.name ?? ''}` : (m?.name ?? '');
}
