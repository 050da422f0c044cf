// prom-client helpers: one Registry per process or server (never the global one, so two servers in one
// test process do not collide) and histogram buckets that resolve sub-millisecond to multi-second latencies.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LabelFolding } from './folded-labels.ts';
import { LeanCounter } from './lean-counter.ts';
import { LeanHistogram } from './lean-histogram.ts';
import { firstChunkRendered, metricsChunks } from './metrics-text.ts';

export { Counter, Gauge, Histogram, Registry };

/**
 * Latency buckets in seconds (the Prometheus convention) from 0.25 ms to 10 s: reconcile functions answer
 * in well under a millisecond, while API-server round trips and cold-started functions take much longer.
 */
export const LATENCY_BUCKETS_SECONDS = [
  0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
] as const;

export interface MetricsRegistryOptions {
  /** Collect process and Node.js runtime metrics (CPU, memory, event-loop lag, GC). Default true. */
  defaultMetrics?: boolean;
  /** Labels added to every series, e.g. { component: 'router' }. Keep them constant. */
  defaultLabels?: Record<string, string>;
}

/**
 * How often the event-loop lag histogram samples, in ms. prom-client's default, 10 ms, wakes an idle process 100
 * times a second, ~4.5 ms of CPU per second in every router, gateway and function pod; at 100 ms it is 10
 * wake-ups and ~0.6 ms/s (bench/idle-metrics.bench.ts), while a lag worth alerting on still shows.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** Default labels by registry, so the OpenMetrics view of a registry carries them too. */
const defaultLabelsOf = new WeakMap<Registry, Record<string, string>>();

export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultLabels) {
    registry.setDefaultLabels(options.defaultLabels);
    defaultLabelsOf.set(registry, options.defaultLabels);
  }
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/** A latency histogram in seconds with LATENCY_BUCKETS_SECONDS, registered on `registry`. */
export function latencyHistogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Histogram<L> {
  return new LeanHistogram<L>({ name, help, labelNames, buckets: [...LATENCY_BUCKETS_SECONDS], registers: [registry] });
}

/** A latency histogram whose observations may carry the trace id as an OpenMetrics exemplar. */
export interface ExemplarHistogram<L extends string> {
  readonly histogram: Histogram<L>;
  observe(labels: Partial<Record<L, string | number>>, seconds: number, traceId?: string): void;
}

/** `folding`: labels whose values are folded into a bounded set (folded-labels.ts), as for counter(). */
export function exemplarLatencyHistogram<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[] = [], folding?: LabelFolding): ExemplarHistogram<L> {
  // prom-client refuses exemplars on a Prometheus-format registry at construction; registered afterwards, the
  // exemplars are kept and rendered only by the OpenMetrics view (openMetricsView).
  const histogram = new LeanHistogram<L>({ name, help, labelNames, buckets: [...LATENCY_BUCKETS_SECONDS], registers: [], enableExemplars: true }, folding);
  registry.registerMetric(histogram);
  return {
    histogram,
    observe(labels, seconds, traceId) {
      histogram.observeLabelled(labels, seconds, traceId === undefined ? undefined : { trace_id: traceId });
    },
  };
}

type OpenMetricsRegistry = Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>;
/** Each view and the metrics it already holds: by object, as the view files a counter without its `_total`. */
const openMetricsViews = new WeakMap<Registry, { view: OpenMetricsRegistry; holds: WeakSet<object> }>();

/** What GET /metrics serves: its content type and its page, rendered a family per event-loop turn, in chunks (metrics-text.ts). */
export interface MetricsView {
  readonly contentType: string;
  /** Resolves once the first chunk is rendered (rejects when the registry cannot be read, before anything is sent). */
  page(): Promise<AsyncIterable<string>>;
}

/** What GET /metrics serves for an Accept header: OpenMetrics only when asked for, as it carries the exemplars
 * (trace ids) Prometheus stores with exemplar storage on; the Prometheus text format otherwise. */
export function metricsViewFor(registry: Registry, accept: string | undefined): MetricsView {
  const view = /application\/openmetrics-text/.test(accept ?? '') ? openMetricsView(registry) : registry;
  return { contentType: view.contentType, page: () => firstChunkRendered(metricsChunks(view)) };
}

/**
 * The same metrics in the OpenMetrics text format (with exemplars), for a scraper that asks for it in its
 * Accept header; the registry itself keeps answering in the Prometheus text format.
 */
export function openMetricsView(registry: Registry): OpenMetricsRegistry {
  let known = openMetricsViews.get(registry);
  if (!known) {
    const view = new Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>();
    view.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const labels = defaultLabelsOf.get(registry);
    if (labels) view.setDefaultLabels(labels);
    known = { view, holds: new WeakSet() };
    openMetricsViews.set(registry, known);
  }
  // Metrics registered since the last scrape (a Loop added) join the view. Not looked up by name: a counter
  // `x_total` is filed as `x` there, so a name lookup missed it and each scrape added it again (a duplicate
  // family, which a scraper refuses).
  for (const metric of registry.getMetricsAsArray()) {
    if (known.holds.has(metric)) continue;
    known.view.registerMetric(metric as unknown as Parameters<OpenMetricsRegistry['registerMetric']>[0]);
    known.holds.add(metric);
  }
  return known.view;
}

/** `folding`: labels whose values are folded into a bounded set (folded-labels.ts: the first N Loops, then "other"). */
export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  folding?: LabelFolding,
): Counter<L> {
  return new LeanCounter<L>({ name, help, labelNames, registers: [registry] }, folding);
}

export function gauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Gauge<L> {
  return new Gauge<L>({ name, help, labelNames, registers: [registry] });
}

/** Seconds elapsed since `start` (a value of process.hrtime.bigint()), for Histogram.observe. */
export function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** prometheus.ExponentialBuckets: `count` buckets from `start`, each `factor` times the last (rounded to 6 significant digits). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => Number((start * factor ** i).toPrecision(6)));
}
