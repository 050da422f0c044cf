// Trace context for every deployable through @opentelemetry/api only (no SDK, no node: modules), so the Web
// fetch handler can use it too. Without a registered tracer provider every call here is the API's no-op.
import { context, INVALID_SPAN_CONTEXT, propagation, SpanKind, trace, TraceFlags, type Context, type Span, type SpanContext, type TextMapGetter, type Tracer } from '@opentelemetry/api';

export type { Context, Span };

/** The instrumentation scope of every kubeloop span. */
export const TRACER_NAME = 'kubeloop';

export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** Lower-case header names, one value or several (Node's IncomingHttpHeaders, undici's, a plain record). */
export type HeaderRecord = Record<string, string | string[] | undefined>;

const headerGetter: TextMapGetter<HeaderRecord> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/** The context a caller's `traceparent`/`tracestate` headers name (the root context when there are none). */
export function contextFromHeaders(headers: HeaderRecord, parent: Context = context.active()): Context {
  // A caller that did not record (the router sends its unsampled context along): read without the propagator,
  // which costs a microsecond per call; nothing after it is recorded, so its tracestate does not matter.
  const unsampled = unsampledParent(headers.traceparent);
  if (unsampled) return trace.setSpanContext(parent, unsampled);
  return propagation.extract(parent, headers, headerGetter);
}

/** A valid W3C traceparent whose sampled flag is unset, while a propagator is registered (tracing is on). */
function unsampledParent(value: string | string[] | undefined): SpanContext | undefined {
  // Checked by hand, not by a regular expression: this runs for most calls, and a match costs more than the rest.
  if (typeof value !== 'string' || value.length < 55 || !isTraceparentLayout(value)) return undefined;
  const flags = Number.parseInt(value.slice(53, 55), 16);
  if ((flags & TraceFlags.SAMPLED) !== 0 || value.startsWith('ff')) return undefined;
  // Version 00 is exactly 55 characters; a later version may append fields after a dash.
  if (value.length > 55 && (value.startsWith('00') || value[55] !== '-')) return undefined;
  if (propagation.fields().length === 0) return undefined;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  if (traceId === INVALID_SPAN_CONTEXT.traceId || spanId === INVALID_SPAN_CONTEXT.spanId) return undefined;
  return { traceId, spanId, traceFlags: flags, isRemote: true };
}

/** vv-<32 hex>-<16 hex>-ff, lower-case hex as W3C Trace Context requires. */
function isTraceparentLayout(value: string): boolean {
  for (let i = 0; i < 55; i++) {
    const c = value.charCodeAt(i);
    const dash = i === 2 || i === 35 || i === 52;
    if (dash ? c !== 45 : !((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** Stands in for the span of a call that is not recorded: every call on it is a no-op. */
const NOT_RECORDED = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * The span of a call the function serves (a SERVER span, child of the caller's). None for a caller that did
 * not record: parent-based sampling (kubeloop's, and every OpenTelemetry SDK's default) records no child of
 * an unsampled remote parent, so the span the SDK would make (ids, sampler, metrics) is skipped.
 */
export function startServerSpan(name: string, parent: Context): Span {
  const caller = trace.getSpanContext(parent);
  if (caller?.isRemote && (caller.traceFlags & TraceFlags.SAMPLED) === 0 && trace.isSpanContextValid(caller)) return NOT_RECORDED;
  return tracer().startSpan(name, { kind: SpanKind.SERVER }, parent);
}

/**
 * The W3C headers that carry `ctx` to the next hop: `traceparent` and `tracestate`, and for a CloudEvent
 * in binary mode the same traceparent as its `ce-traceparent` extension (the Distributed Tracing extension).
 * Empty when nothing is being traced.
 */
export function traceHeaders(ctx: Context, cloudEvent = false): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  if (cloudEvent && carrier.traceparent !== undefined) carrier['ce-traceparent'] = carrier.traceparent;
  return carrier;
}

/** The trace id of a span that is recorded (sampled), for log lines, exemplars and the flight recorder. */
export function recordedTraceId(span: Span | undefined): string | undefined {
  if (!span?.isRecording()) return undefined;
  return span.spanContext().traceId;
}

/** The trace id of the span active in `ctx` (the current context by default) when it is recorded. */
export function activeTraceId(ctx: Context = context.active()): string | undefined {
  return recordedTraceId(trace.getSpan(ctx));
}
