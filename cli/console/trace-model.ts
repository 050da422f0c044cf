// One span as the console shows it, whichever backend it came from (OTLP into its own store, Jaeger's query
// API): times in microseconds since the epoch, attributes flattened to scalars. Shared by server and UI.
export type AttributeValue = string | number | boolean;

export interface TraceSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** service.name of the process that made it (kubeloop-router, apiserver, a function ...). */
  service: string;
  startUs: number;
  durationUs: number;
  attributes: Record<string, AttributeValue>;
  events: Array<{ name: string; atUs: number; attributes: Record<string, AttributeValue> }>;
  /** OTLP status: error spans are drawn as such. */
  error?: { message: string };
}

/** What a list of traces shows before one is opened. */
export interface TraceSummary {
  traceId: string;
  /** The root span's name (`reconcile podset`), or the earliest span's when the root has not arrived. */
  name: string;
  service: string;
  startUs: number;
  durationUs: number;
  spans: number;
  /** Any span in error, or a reconcile whose outcome was not ok. */
  failed: boolean;
  /** The root's attributes (kubeloop.object, kubeloop.trigger ...). */
  attributes: Record<string, AttributeValue>;
}

/** Summarises one trace's spans (none: undefined). */
export function summarizeTrace(spans: readonly TraceSpan[]): TraceSummary | undefined {
  if (spans.length === 0) return undefined;
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => s.parentSpanId === undefined || !ids.has(s.parentSpanId));
  const root = [...(roots.length > 0 ? roots : spans)].sort((a, b) => a.startUs - b.startUs)[0] as TraceSpan;
  const start = Math.min(...spans.map((s) => s.startUs));
  const end = Math.max(...spans.map((s) => s.startUs + s.durationUs));
  const outcome = spans.map((s) => s.attributes['kubeloop.outcome']).find((o) => o !== undefined);
  return {
    traceId: root.traceId,
    name: root.name,
    service: root.service,
    startUs: start,
    durationUs: end - start,
    spans: spans.length,
    failed: spans.some((s) => s.error !== undefined) || (outcome !== undefined && outcome !== 'ok'),
    attributes: root.attributes,
  };
}
