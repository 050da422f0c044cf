// A trace as a waterfall: its spans as a tree (children under their parent, by start time; a span whose
// parent never arrived is a root), each row placed on the trace's time axis in percent. Pure, used by the UI.
import type { TraceSpan } from './trace-model.ts';

export interface WaterfallRow {
  span: TraceSpan;
  depth: number;
  /** Where the bar starts and how wide it is, in percent of the trace's duration. */
  offsetPct: number;
  widthPct: number;
  /** The span's parent is not in the trace (not exported yet, or by a service that is not sampled). */
  orphan: boolean;
}

export interface Waterfall {
  startUs: number;
  durationUs: number;
  rows: WaterfallRow[];
}

const byStart = (a: TraceSpan, b: TraceSpan) => a.startUs - b.startUs || a.name.localeCompare(b.name);

export function layoutWaterfall(spans: readonly TraceSpan[]): Waterfall {
  if (spans.length === 0) return { startUs: 0, durationUs: 0, rows: [] };
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string, TraceSpan[]>();
  const roots: TraceSpan[] = [];
  for (const span of spans) {
    if (span.parentSpanId !== undefined && ids.has(span.parentSpanId) && span.parentSpanId !== span.spanId) {
      const list = children.get(span.parentSpanId) ?? [];
      list.push(span);
      children.set(span.parentSpanId, list);
    } else roots.push(span);
  }
  const startUs = Math.min(...spans.map((s) => s.startUs));
  const durationUs = Math.max(1, Math.max(...spans.map((s) => s.startUs + s.durationUs)) - startUs);
  const rows: WaterfallRow[] = [];
  const seen = new Set<string>();
  const visit = (span: TraceSpan, depth: number) => {
    // A cycle of parent ids (a broken exporter) must not hang the page.
    if (seen.has(span.spanId)) return;
    seen.add(span.spanId);
    const offsetPct = ((span.startUs - startUs) / durationUs) * 100;
    rows.push({
      span,
      depth,
      offsetPct,
      widthPct: Math.max(0, Math.min(100 - offsetPct, (span.durationUs / durationUs) * 100)),
      orphan: depth === 0 && span.parentSpanId !== undefined,
    });
    for (const child of (children.get(span.spanId) ?? []).sort(byStart)) visit(child, depth + 1);
  };
  for (const root of roots.sort(byStart)) visit(root, 0);
  return { startUs, durationUs, rows };
}

/** "850us", "12.3ms", "1.25s": a duration as a waterfall labels it. */
export function formatDuration(us: number): string {
  if (us < 1000) return `${Math.round(us)}us`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)}ms`;
  return `${(us / 1_000_000).toFixed(2)}s`;
}
