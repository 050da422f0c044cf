// The console's own store of recent traces (kubeloop dev without Jaeger): spans received over OTLP, kept in
// memory by trace id, bounded twice (traces, spans per trace), the least recently touched trace dropped first.
import { summarizeTrace, type TraceSpan, type TraceSummary } from './trace-model.ts';

export interface TraceStoreLimits {
  traces: number;
  spansPerTrace: number;
}

export const DEFAULT_TRACE_STORE_LIMITS: TraceStoreLimits = { traces: 2000, spansPerTrace: 1000 };

export class TraceStore {
  // Map iteration order is insertion order: re-inserting on each add keeps the least recent first.
  readonly #traces = new Map<string, TraceSpan[]>();
  readonly #limits: TraceStoreLimits;
  /** Spans not kept because their trace was full. */
  dropped = 0;

  constructor(limits: TraceStoreLimits = DEFAULT_TRACE_STORE_LIMITS) {
    this.#limits = limits;
  }

  add(spans: readonly TraceSpan[]): void {
    for (const span of spans) {
      const kept = this.#traces.get(span.traceId) ?? [];
      this.#traces.delete(span.traceId);
      if (kept.length < this.#limits.spansPerTrace) kept.push(span);
      else this.dropped++;
      this.#traces.set(span.traceId, kept);
    }
    for (const oldest of this.#traces.keys()) {
      if (this.#traces.size <= this.#limits.traces) break;
      this.#traces.delete(oldest);
    }
  }

  get(traceId: string): TraceSpan[] | undefined {
    return this.#traces.get(traceId.toLowerCase());
  }

  /** Summaries of the traces whose root matches, newest first, at most `limit`. */
  find(match: (summary: TraceSummary) => boolean, limit: number): TraceSummary[] {
    const found: TraceSummary[] = [];
    for (const spans of [...this.#traces.values()].reverse()) {
      const summary = summarizeTrace(spans);
      if (summary && match(summary)) found.push(summary);
    }
    return found.sort((a, b) => b.startUs - a.startUs).slice(0, limit);
  }
}
