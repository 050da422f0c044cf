// The router's Prometheus metrics; label sets are bounded (loops, ops, results, status classes).
import { counter, createMetricsRegistry, gauge, latencyHistogram, type Registry } from '../lib/observability/metrics.ts';

export type RouterMetrics = ReturnType<typeof createRouterMetrics>;

export function createRouterMetrics(registry: Registry = createMetricsRegistry({ defaultLabels: { component: 'router' } })) {
  return {
    registry,
    queueDepth: gauge(registry, 'kubeloop_router_queue_depth', 'Keys waiting in a Loop queue', ['loop']),
    inFlight: gauge(registry, 'kubeloop_router_calls_in_flight', 'Function calls in flight', ['loop']),
    queueWait: latencyHistogram(registry, 'kubeloop_router_queue_wait_seconds', 'Time a key waited in the queue', ['loop']),
    reconcileDuration: latencyHistogram(registry, 'kubeloop_router_reconcile_duration_seconds', 'One reconcile: call plus applying actions', ['loop', 'result']),
    functionCalls: counter(registry, 'kubeloop_router_function_calls_total', 'Function calls by HTTP status class or failure', ['loop', 'code']),
    ownWriteSkips: counter(registry, 'kubeloop_router_own_write_skips_total', 'Calls not made: the event was exactly the result of the router\'s own patch', ['loop']),
    functionLatency: latencyHistogram(registry, 'kubeloop_router_function_call_seconds', 'Function call round trip', ['loop']),
    actions: counter(registry, 'kubeloop_router_actions_total', 'Actions applied, by op and result', ['loop', 'op', 'result']),
    refusals: counter(registry, 'kubeloop_router_authority_refusals_total', 'Actions refused for touching objects outside the Loop', ['loop']),
    watchRestarts: counter(registry, 'kubeloop_router_watch_restarts_total', 'Informer restarts, by reason', ['resource', 'reason']),
    watchedObjects: gauge(registry, 'kubeloop_router_watched_objects', 'Objects in the informer caches', ['resource']),
    leader: gauge(registry, 'kubeloop_router_leader', '1 while this replica holds the lease'),
  };
}

/** "2xx", "4xx", "429", "5xx", "timeout", "unreachable", "invalid": bounded, unlike raw status codes. */
export function callCode(kind: string, status: number | undefined, reason?: string): string {
  if (kind === 'throttled') return '429';
  if (reason === 'Timeout') return 'timeout';
  if (reason === 'Unreachable') return 'unreachable';
  if (reason === 'InvalidResponse') return 'invalid';
  if (status === undefined) return 'error';
  return `${Math.floor(status / 100)}xx`;
}
