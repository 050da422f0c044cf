// Prometheus series of a function server; label values are bounded (function name, HTTP status, error code).
import type { Counter, Histogram, Registry } from 'prom-client';
import { counter, latencyHistogram } from '../observability/metrics.ts';

export interface FunctionMetrics {
  /** One call, whatever its outcome; `status` is the HTTP status sent. */
  observe(status: number, seconds: number): void;
  /** A failed call by error code (InvalidJSON, FunctionError, ...). */
  error(code: string): void;
}

export function createFunctionMetrics(registry: Registry, functionName: string): FunctionMetrics {
  const requests: Counter<'function' | 'code'> = counter(
    registry,
    'kubeloop_function_requests_total',
    'Reconcile requests served, by HTTP status code',
    ['function', 'code'],
  );
  const duration: Histogram<'function'> = latencyHistogram(
    registry,
    'kubeloop_function_request_duration_seconds',
    'Time from a received body to a serialized reply (parse, validate, reconcile, validate reply)',
    ['function'],
  );
  const errors: Counter<'function' | 'code'> = counter(
    registry,
    'kubeloop_function_errors_total',
    'Reconcile requests that failed, by error code',
    ['function', 'code'],
  );
  // Label children are resolved once: a label lookup per request is measurable at tens of thousands of req/s.
  const byStatus = new Map<number, Counter.Internal>();
  const timer = duration.labels({ function: functionName });
  return {
    observe(status, seconds) {
      let child = byStatus.get(status);
      if (!child) {
        child = requests.labels({ function: functionName, code: String(status) });
        byStatus.set(status, child);
      }
      child.inc();
      timer.observe(seconds);
    },
    error(code) {
      errors.labels({ function: functionName, code }).inc();
    },
  };
}
