// What one reconcile leaves behind for "why": an OpenTelemetry trace (root span from the first coalesced watch
// event, its events, a queue span, the call, the decision and one span per API write) and a flight-recorder
// entry. With tracing off the spans are the API's no-ops; with the recorder off nothing is assembled.
import { hash } from 'node:crypto';
import { INVALID_SPAN_CONTEXT, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { ReconcileRequest, Action } from '../../lib/contract/types.ts';
import { recordedTraceId, traceHeaders, tracer } from '../../lib/observability/trace-context.ts';
import type { ObservedWrite, RouterAction, WriteObserver, WriteOutcome } from '../apply/apply-actions.ts';
import { describeWatchEvent, type WatchEvent } from '../base/watch-events.ts';
import type { DispatchResult } from './dispatch.ts';
import { MAX_RECORDED_LINES, type FlightRecorder, type ReconcileRecord, type WriteRecord } from './flight-recorder.ts';

const NO_HEADERS: Record<string, string> = {};
/** Stands in for a span not made (the reconcile is not recorded): every call on it is a no-op, its end too. */
const NOT_RECORDED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/** performance.now() of the queue's clock as wall time. */
function wallTime(performanceMs: number): number {
  return performance.timeOrigin + performanceMs;
}

export class ReconcileTrace implements WriteObserver {
  readonly span: Span;
  readonly context: Context;
  readonly traceId: string | undefined;
  readonly #record: ReconcileRecord | undefined;
  readonly #recorder: FlightRecorder | undefined;
  readonly #started: number;
  #applyStarted = 0;

  constructor(
    readonly loop: string,
    readonly key: string,
    events: readonly WatchEvent[],
    enqueuedAt: number,
    recorder: FlightRecorder | undefined,
  ) {
    this.#started = performance.now();
    const t = tracer();
    const firstEvent = events[0]?.at ?? wallTime(enqueuedAt);
    const trigger = events.at(-1);
    // No attributes at the start: the ratio sampler decides on the trace id alone, and most reconciles (all
    // with tracing off, nine in ten at 10 %) are not recorded: nothing is built for them (bench:router, tracing).
    this.span = t.startSpan(`reconcile ${loop}`, { kind: SpanKind.CONSUMER, startTime: Math.min(firstEvent, wallTime(enqueuedAt)) }, ROOT_CONTEXT);
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
    if (this.span.isRecording()) {
      this.span.setAttributes({
        'kubeloop.loop': loop,
        'kubeloop.object': key,
        'kubeloop.trigger': trigger ? describeWatchEvent(trigger) : 'REQUEUE',
        'kubeloop.trigger.source': trigger?.source ?? 'requeue',
        'kubeloop.trigger.type': trigger?.type ?? 'REQUEUE',
        ...(trigger?.resourceVersion === undefined ? {} : { 'kubeloop.trigger.resource_version': trigger.resourceVersion }),
        'kubeloop.trigger.coalesced': events.length,
      });
      for (const event of events) {
        this.span.addEvent(
          'watch event',
          { 'kubeloop.trigger': describeWatchEvent(event), 'kubeloop.trigger.source': event.source, 'kubeloop.trigger.type': event.type, 'k8s.object': event.object, 'k8s.kind': event.kind, ...(event.resourceVersion === undefined ? {} : { 'k8s.resource_version': event.resourceVersion }) },
          event.at,
        );
      }
      t.startSpan('queue', { startTime: wallTime(enqueuedAt), attributes: { 'kubeloop.queue.wait_ms': Math.round(this.#started - enqueuedAt) } }, this.context).end(wallTime(this.#started));
    }
    this.traceId = recordedTraceId(this.span);
    this.#recorder = recorder?.enabled ? recorder : undefined;
    this.#record = this.#recorder
      ? {
          startedAt: new Date(wallTime(this.#started)).toISOString(),
          ...(this.traceId ? { traceId: this.traceId } : {}),
          triggers: [...events],
          actions: [],
          writes: [],
          outcome: 'pending',
          durations: { queueMs: Math.round(this.#started - enqueuedAt), totalMs: 0 },
        }
      : undefined;
  }

  /** Starts the call's client span; the headers carry it to the function (and as the CloudEvents extension). */
  startCall(request: ReconcileRequest, url: string): { span: Span; headers: Record<string, string> } {
    // Unrecorded: no call span, but the root's (unsampled) context still goes along, so the function follows the decision.
    const span = this.span.isRecording() ? tracer().startSpan(`call ${this.loop}`, { kind: SpanKind.CLIENT, attributes: { 'url.full': url, 'kubeloop.reconcile_id': request.reconcileId ?? '' } }, this.context) : NOT_RECORDED;
    if (this.#record) {
      if (request.reconcileId) this.#record.reconcileId = request.reconcileId;
      this.#record.requestDigest = requestDigest(request);
      this.#record.request = request;
    }
    return { span, headers: traceHeaders(span === NOT_RECORDED ? this.context : trace.setSpan(this.context, span), true) };
  }

  endCall(span: Span, result: DispatchResult, callMs: number): void {
    span.setAttribute('http.response.status_code', result.status ?? 0);
    span.setAttribute('kubeloop.call.result', result.kind);
    if (result.kind !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: result.message });
    span.end();
    if (!this.#record) return;
    this.#record.durations.callMs = Math.round(callMs);
    if (result.kind === 'ok') this.#recordActions(result.response.actions ?? []);
    else this.#record.callError = `${result.kind === 'failed' ? result.reason : result.kind} ${result.status ?? ''}: ${result.message}`.replace(/ :/, ':');
  }

  /** A kept answer is applied again without a call. */
  replayed(actions: readonly Action[]): void {
    this.span.setAttribute('kubeloop.conflict_replay', true);
    if (!this.#record) return;
    this.#record.replayed = true;
    this.#recordActions(actions);
  }

  #recordActions(actions: readonly Action[]): void {
    this.#record!.actions = actions.slice(0, MAX_RECORDED_LINES).map(describeAction);
    if (actions.length > MAX_RECORDED_LINES) this.#omitted().actions = actions.length - MAX_RECORDED_LINES;
  }

  #omitted(): { actions: number; writes: number } {
    return (this.#record!.omitted ??= { actions: 0, writes: 0 });
  }

  /** One span per API write (WriteObserver, called by applyActions), and its line in the record. */
  begin(action: RouterAction): ObservedWrite {
    if (this.#applyStarted === 0) this.#applyStarted = performance.now();
    const what = describeAction(action);
    const span = this.span.isRecording() ? tracer().startSpan(what, { kind: SpanKind.CLIENT, attributes: { 'kubeloop.write.op': action.op } }, this.context) : NOT_RECORDED;
    const started = performance.now();
    // The API server (with its tracing on) continues the write span: its spans for the request nest under it.
    const headers = span.isRecording() ? traceHeaders(trace.setSpan(this.context, span)) : NO_HEADERS;
    const end = (outcome: WriteOutcome): void => {
      span.setAttribute('kubeloop.write.result', outcome.result);
      if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
      if (outcome.result === 'conflict' || outcome.result === 'error' || outcome.result === 'refused') {
        span.setStatus({ code: SpanStatusCode.ERROR, ...(outcome.message ? { message: outcome.message } : {}) });
      }
      span.end();
      if (!this.#record) return;
      if (this.#record.writes.length >= MAX_RECORDED_LINES) {
        this.#omitted().writes += 1;
        return;
      }
      const write: WriteRecord = { action: what, result: outcome.result, ms: Math.round(performance.now() - started) };
      if (outcome.status !== undefined) write.status = outcome.status;
      if (outcome.message !== undefined) write.message = outcome.message;
      this.#record.writes.push(write);
    };
    return { end, headers };
  }

  /** The decision (its span), the root span's end, and the flight-recorder entry. */
  finish(outcome: string, step: string): void {
    const now = performance.now();
    if (this.span.isRecording()) {
      tracer().startSpan('decide', { attributes: { 'kubeloop.outcome': outcome, 'kubeloop.queue_step': step } }, this.context).end();
      this.span.setAttribute('kubeloop.outcome', outcome);
      if (outcome !== 'ok' && outcome !== 'pending') this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    }
    this.span.end();
    if (!this.#record || !this.#recorder) return;
    this.#record.outcome = outcome;
    if (this.#applyStarted > 0) this.#record.durations.applyMs = Math.round(now - this.#applyStarted);
    this.#record.durations.totalMs = Math.round(now - this.#started + this.#record.durations.queueMs);
    this.#recorder.record(this.loop, this.key, this.#record);
  }
}

/**
 * The history entry of a watch event settled before the queue (the router's own write seen at intake,
 * intake/own-write-intake.ts): no call, no write, no time waited; the same entry a reconcile stopped at that
 * stage leaves. No trace: no reconcile ran.
 */
export function recordSettledEvent(recorder: FlightRecorder | undefined, loop: string, key: string, event: WatchEvent, outcome: string): void {
  if (!recorder?.enabled) return;
  const record: ReconcileRecord = { startedAt: new Date(event.at).toISOString(), triggers: [event], actions: [], writes: [], outcome, durations: { queueMs: 0, totalMs: 0 } };
  recorder.record(loop, key, record);
}

/** What the function was shown, cheaply: the primary's and children's resourceVersions and the trigger. */
export function requestDigest(request: ReconcileRequest): string {
  // One string hashed in one call: the same digest as updating a Hash piece by piece, without a Hash object per call.
  let text = `${request.object.metadata?.uid ?? ''}@${request.object.metadata?.resourceVersion ?? ''}|${request.trigger.type}|${request.finalizing ? 'f' : ''}`;
  for (const [kind, children] of Object.entries(request.children)) {
    for (const child of children) text += `|${kind}:${child.metadata?.name ?? ''}@${child.metadata?.resourceVersion ?? ''}`;
  }
  return hash('sha256', text, 'hex').slice(0, 16);
}

/** "create v1/Pod default/web-7x2k", "patch example.com/v1/PodSet default/web", "finalizer". */
export function describeAction(action: RouterAction): string {
  switch (action.op) {
    case 'create':
    case 'apply': {
      const meta = action.object.metadata;
      const name = meta?.name ?? `${meta?.generateName ?? ''}*`;
      return `${action.op} ${action.object.apiVersion ?? ''}/${action.object.kind ?? ''} ${meta?.namespace ? `${meta.namespace}/` : ''}${name}`;
    }
    case 'patch':
    case 'delete': {
      const t = action.target;
      return `${action.op} ${t.apiVersion}/${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name}`;
    }
    case 'event':
      return `event ${action.type} ${action.reason}`;
    default:
      return action.op;
  }
}
