// Starts OpenTelemetry tracing in a Node deployable (router, webhook, function server) when an OTLP endpoint
// is configured: parent-based ratio sampling, batched OTLP/HTTP (protobuf) export. Without an endpoint the
// SDK is never imported and @opentelemetry/api stays the no-op it is by default: tracing off costs nothing.
import { context, propagation, trace } from '@opentelemetry/api';

export interface TracingSettings {
  /** OTLP/HTTP base URL, e.g. http://jaeger:4318 (traces go to <endpoint>/v1/traces); undefined: tracing off. */
  otlpEndpoint?: string;
  /** Extra export headers (authentication to a hosted backend), OTEL_EXPORTER_OTLP_HEADERS syntax. */
  otlpHeaders: Record<string, string>;
  /** Share of new traces sampled, 0..1; a caller's sampled flag is followed (parent-based). */
  samplingRatio: number;
}

export const TRACING_OFF: TracingSettings = { otlpHeaders: {}, samplingRatio: 0 };

export interface Tracing {
  readonly enabled: boolean;
  /** Sends what is buffered and stops exporting (on shutdown, so the last reconciles are not lost). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => {} };

/** `a=b,c=d` (OTEL_EXPORTER_OTLP_HEADERS) as a record; values are URL-decoded as the specification says. */
export function parseOtlpHeaders(value: string | undefined, setting: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (value ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`${setting}: "${pair.trim()}" is not key=value`);
    headers[pair.slice(0, eq).trim().toLowerCase()] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  return headers;
}

/** The endpoint's traces URL: a base URL gets /v1/traces, a URL that already names it is kept. */
export function tracesUrl(endpoint: string): string {
  const trimmed = endpoint.replace(/\/+$/, '');
  return trimmed.endsWith('/v1/traces') ? trimmed : `${trimmed}/v1/traces`;
}

/** Registers the global tracer provider, context manager and W3C propagator; a no-op without an endpoint. */
export async function startTracing(settings: TracingSettings, serviceName: string): Promise<Tracing> {
  if (!settings.otlpEndpoint) return OFF;
  // Imported here, not at the top: a deployable without an endpoint never loads the SDK.
  const [{ TracerProvider, BatchSpanProcessor, ParentBasedSampler, StackContextManager, TraceIdRatioBasedSampler }, { OTLPTraceExporter }, { resourceFromAttributes }, { ATTR_SERVICE_NAME }, { W3CTraceContextPropagator }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-proto'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
      import('@opentelemetry/core'),
    ]);
  const exporter = new OTLPTraceExporter({ url: tracesUrl(settings.otlpEndpoint), headers: settings.otlpHeaders });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRatio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
  });
  // kubeloop hands span contexts on explicitly (a reconcile's, a gateway request's); the one implicit scope is a
  // function call, which is synchronous. A synchronous stack serves it without AsyncLocalStorage's cost on
  // every promise of the process (measured: bench:functions, docs/performance.md).
  context.setGlobalContextManager(new StackContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    enabled: true,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
