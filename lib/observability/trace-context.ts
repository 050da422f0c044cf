// Trace context for every deployable through @opentelemetry/api only (no SDK, no node: modules), so the Web
// fetch handler can use it too. Without a registered tracer provider every call here is the API's no-op.
import { context, propagation, trace, type Context, type Span, type TextMapGetter, type Tracer } from '@opentelemetry/api';

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
  return propagation.extract(parent, headers, headerGetter);
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
