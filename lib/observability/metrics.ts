// prom-client helpers: one Registry per process or server (never the global one, so two servers in one
// test process do not collide) and histogram buckets that resolve sub-millisecond to multi-second latencies.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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

export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

/** A latency histogram in seconds with LATENCY_BUCKETS_SECONDS, registered on `registry`. */
export function latencyHistogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Histogram<L> {
  return new Histogram<L>({ name, help, labelNames, buckets: [...LATENCY_BUCKETS_SECONDS], registers: [registry] });
}

export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Counter<L> {
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
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
