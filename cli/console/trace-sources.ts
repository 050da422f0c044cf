// Where the console finds a trace: its own in-memory store (kubeloop dev, spans received over OTLP) or a
// Jaeger query API (`kubeloop dev --tracing`, or a cluster's Jaeger through a port-forward). One interface:
// a trace by id, and the recent traces of one operation (a Loop's failed reconciles, a hook's admissions).
import type { AttributeValue, TraceSpan, TraceSummary } from './trace-model.ts';
import { summarizeTrace } from './trace-model.ts';
import type { TraceStore } from './trace-store.ts';

export interface TraceSource {
  /** What the UI says the traces come from. */
  describe: string;
  trace(traceId: string): Promise<TraceSpan[] | undefined>;
  /** Recent traces whose root is `operation` of `service`, newest first; with failedOnly those that failed. */
  recent(of: { service: string; operation: string }, failedOnly: boolean, limit: number): Promise<TraceSummary[]>;
}

/** A Loop's reconciles and a hook's admissions, as the router and the gateway name their root spans. */
export const reconcilesOf = (loop: string) => ({ service: 'kubeloop-router', operation: `reconcile ${loop}` });
export const admissionsOf = (hook: string) => ({ service: 'kubeloop-webhook', operation: `admit ${hook}` });

export function storeSource(store: TraceStore): TraceSource {
  return {
    describe: 'the console (OTLP/HTTP received at /v1/traces)',
    trace: async (traceId) => store.get(traceId),
    recent: async ({ operation }, failedOnly, limit) => store.find((s) => s.name === operation && (!failedOnly || s.failed), limit),
  };
}

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references?: Array<{ refType: string; spanID: string }>;
  startTime: number;
  duration: number;
  processID: string;
  tags?: Array<{ key: string; value: AttributeValue }>;
  logs?: Array<{ timestamp: number; fields?: Array<{ key: string; value: AttributeValue }> }>;
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

const fields = (list: Array<{ key: string; value: AttributeValue }> | undefined) => Object.fromEntries((list ?? []).map((t) => [t.key, t.value]));

/** Jaeger's JSON (api/traces) as the console's spans. Pure. */
export function spansFromJaeger(trace: JaegerTrace): TraceSpan[] {
  return trace.spans.map((s) => {
    const attributes = fields(s.tags);
    const parent = s.references?.find((r) => r.refType === 'CHILD_OF')?.spanID;
    const logs = s.logs ?? [];
    const span: TraceSpan = {
      traceId: s.traceID,
      spanId: s.spanID,
      name: s.operationName,
      service: trace.processes[s.processID]?.serviceName ?? 'unknown',
      startUs: s.startTime,
      durationUs: s.duration,
      attributes,
      events: logs.map((l) => {
        const { event, ...rest } = fields(l.fields);
        return { name: String(event ?? ''), atUs: l.timestamp, attributes: rest };
      }),
    };
    if (parent) span.parentSpanId = parent;
    if (attributes.error === true || attributes['otel.status_code'] === 'ERROR') span.error = { message: String(attributes['otel.status_description'] ?? '') };
    return span;
  });
}

/** Jaeger's query API at `baseUrl` (http://127.0.0.1:16686). */
export function jaegerSource(baseUrl: string): TraceSource {
  const base = baseUrl.replace(/\/+$/, '');
  const get = async (path: string): Promise<JaegerTrace[]> => {
    const reply = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(5000) });
    if (reply.status === 404) return [];
    if (!reply.ok) throw new Error(`Jaeger ${base}${path}: HTTP ${reply.status}`);
    return ((await reply.json()) as { data: JaegerTrace[] | null }).data ?? [];
  };
  return {
    describe: `Jaeger at ${base}`,
    async trace(traceId) {
      const [found] = await get(`/api/traces/${encodeURIComponent(traceId)}`);
      return found ? spansFromJaeger(found) : undefined;
    },
    async recent({ service, operation }, failedOnly, limit) {
      const query = new URLSearchParams({ service, operation, limit: '50', lookback: '1h' });
      const traces = await get(`/api/traces?${query}`);
      return traces
        .map((t) => summarizeTrace(spansFromJaeger(t)))
        .filter((s): s is TraceSummary => s !== undefined && (!failedOnly || s.failed))
        .sort((a, b) => b.startUs - a.startUs)
        .slice(0, limit);
    },
  };
}
