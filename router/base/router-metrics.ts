// The router's Prometheus metrics: controller-runtime's and client-go's names, types, labels and buckets
// where they mean the same (docs/metrics.md), kubeloop_router_* for the rest; label sets are bounded.
import { counter as makeCounter, createMetricsRegistry, exemplarLatencyHistogram as makeExemplarHistogram, exponentialBuckets, gauge, Gauge, Histogram, type Registry } from '../../lib/observability/metrics.ts';
import type { KubeRequestSample } from '../../lib/kube/kube-client.ts';
import { BoundedLabel } from '../../lib/observability/bounded-label.ts';
import type { LabelFolding } from '../../lib/observability/folded-labels.ts';
import { LeanHistogram } from '../../lib/observability/lean-histogram.ts';

export type RouterMetrics = ReturnType<typeof createRouterMetrics>;

/** client-go's workqueue buckets: prometheus.ExponentialBuckets(10e-9, 10, 12), 10 ns to 1000 s. */
export const WORKQUEUE_BUCKETS = exponentialBuckets(10e-9, 10, 12);
/** controller_runtime_reconcile_time_seconds' buckets (controller-runtime v0.25). */
export const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** rest_client_request_duration_seconds' buckets (controller-runtime's client-go adapter). */
export const REST_CLIENT_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

/** What a Loop's queue shows at scrape time: read then, so the hot path never updates these gauges. */
export interface QueueProbe {
  depth(): number;
  activeWorkers(): number;
  /** Start times (performance.now() ms) of the keys being processed. */
  processingSince(): Iterable<number>;
}

type LoopLabels = 'name' | 'controller';

/**
 * Loops with their own `loop` / `controller` / workqueue `name` label; later ones share `other`. At ~125
 * samples per Loop (histograms of 12 to 40 buckets), 1,000 Loops were 125,514 samples and 730 ms of CPU per
 * scrape (docs/performance.md); kubeloop_loop_condition stays per Loop (which Loop is not Ready).
 */
export const DEFAULT_LABELLED_LOOPS = 100;
const LOOP_LABEL_NAMES = ['loop', 'controller', 'name'] as const;

interface ProbedQueue {
  probe: QueueProbe;
  maxConcurrency: number;
}

function makeHistogram<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[], buckets: number[], folding: LabelFolding): Histogram<L> {
  return new LeanHistogram<L>({ name, help, labelNames, buckets, registers: [registry] }, folding);
}

/**
 * A gauge computed from the registered queue probes at each scrape; Loops that share a label (`other`) are
 * combined: summed, or the largest for `combine: 'max'`.
 */
function probedGauge<L extends string>(registry: Registry, probes: Map<string, ProbedQueue>, name: string, help: string, labelNames: readonly L[], value: (queue: ProbedQueue, now: number) => number, labels: (loop: string) => Record<L, string>, combine: 'sum' | 'max' = 'sum'): Gauge<L> {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      const now = performance.now();
      const values = new Map<string, { labels: Record<L, string>; value: number }>();
      for (const [loop, queue] of probes) {
        const at = labels(loop);
        const key = JSON.stringify(at);
        const v = value(queue, now);
        const seen = values.get(key);
        values.set(key, { labels: at, value: seen === undefined ? v : combine === 'max' ? Math.max(seen.value, v) : seen.value + v });
      }
      for (const { labels: at, value: v } of values.values()) this.set(at, v);
    },
  });
}

function unfinishedSeconds({ probe }: ProbedQueue, now: number): number {
  let total = 0;
  for (const since of probe.processingSince()) total += now - since;
  return total / 1000;
}

function longestRunningSeconds({ probe }: ProbedQueue, now: number): number {
  let oldest = now;
  for (const since of probe.processingSince()) oldest = Math.min(oldest, since);
  return (now - oldest) / 1000;
}

export function createRouterMetrics(registry: Registry = createMetricsRegistry({ defaultLabels: { component: 'router' } }), maxLabelledLoops: number = DEFAULT_LABELLED_LOOPS) {
  const probes = new Map<string, ProbedQueue>();
  /** kubeloop_loop_condition's status by Loop and condition type, as last set. */
  const shownConditions = new Map<string, boolean>();
  let cacheProbe: (() => Iterable<[string, number]>) | undefined;
  const loops = new BoundedLabel(maxLabelledLoops);
  const loopLabel = (loop: string) => loops.of(loop);
  // Every counter and histogram labelled by Loop folds the Loop's name through the bound where it builds a series
  // key (once per bound child, once per run of one label set): call sites keep naming the Loop. Families without
  // these labels are left as they are.
  const byLoop: LabelFolding = { labels: LOOP_LABEL_NAMES, into: loops };
  const counter = <L extends string>(r: Registry, name: string, help: string, labelNames: readonly L[] = []) => makeCounter<L>(r, name, help, labelNames, byLoop);
  const histogram = <L extends string>(r: Registry, name: string, help: string, labelNames: readonly L[], buckets: number[]) => makeHistogram<L>(r, name, help, labelNames, buckets, byLoop);
  const exemplarLatencyHistogram = <L extends string>(r: Registry, name: string, help: string, labelNames: readonly L[]) => makeExemplarHistogram<L>(r, name, help, labelNames, byLoop);
  const queueLabels = (loop: string) => ({ name: loopLabel(loop), controller: loopLabel(loop) });
  const controllerLabels = (loop: string) => ({ controller: loopLabel(loop) });
  const queueGauge = (name: string, help: string, value: (queue: ProbedQueue, now: number) => number, combine?: 'max') =>
    probedGauge<LoopLabels>(registry, probes, name, help, ['name', 'controller'], value, queueLabels, combine);
  return {
    registry,
    /** The `loop` label a Loop's series carry: its name for the first --loop-metrics-labels Loops, else `other`. */
    loopLabel,
    // client-go / controller-runtime workqueue metrics, one queue per Loop (name = controller = the Loop).
    queueDepth: queueGauge('workqueue_depth', 'Current depth of workqueue', ({ probe }) => probe.depth()),
    unfinishedWork: queueGauge('workqueue_unfinished_work_seconds', 'How many seconds of work has been done that is in progress and hasn\'t been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.', unfinishedSeconds),
    longestRunning: queueGauge('workqueue_longest_running_processor_seconds', 'How many seconds has the longest running processor for workqueue been running.', longestRunningSeconds, 'max'),
    queueAdds: counter<LoopLabels>(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue', ['name', 'controller']),
    queueRetries: counter<LoopLabels>(registry, 'workqueue_retries_total', 'Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)', ['name', 'controller']),
    queueWait: histogram<LoopLabels>(registry, 'workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested', ['name', 'controller'], WORKQUEUE_BUCKETS),
    workDuration: histogram<LoopLabels>(registry, 'workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes.', ['name', 'controller'], WORKQUEUE_BUCKETS),
    // controller-runtime's controller metrics (controller = the Loop).
    reconcileTotal: counter<'controller' | 'result'>(registry, 'controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']),
    reconcileErrors: counter<'controller'>(registry, 'controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', ['controller']),
    reconcileTime: histogram<'controller'>(registry, 'controller_runtime_reconcile_time_seconds', 'Length of time per reconciliation per controller', ['controller'], RECONCILE_TIME_BUCKETS),
    maxConcurrentReconciles: probedGauge<'controller'>(registry, probes, 'controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', ['controller'], (q) => q.maxConcurrency, controllerLabels),
    activeWorkers: probedGauge<'controller'>(registry, probes, 'controller_runtime_active_workers', 'Number of currently used workers per controller', ['controller'], ({ probe }) => probe.activeWorkers(), controllerLabels),
    // client-go's REST client metrics for every API request the router makes.
    restRequests: counter<'code' | 'method' | 'host'>(registry, 'rest_client_requests_total', 'Number of HTTP requests, partitioned by status code, method, and host.', ['code', 'method', 'host']),
    restLatency: histogram<'verb' | 'host'>(registry, 'rest_client_request_duration_seconds', 'Request latency in seconds. Broken down by verb and host.', ['verb', 'host'], REST_CLIENT_BUCKETS),
    leader: gauge<'name'>(registry, 'leader_election_master_status', 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. \'name\' is the string used to identify the lease. Please make sure to group by name.', ['name']),
    // kubeloop's own: no controller-runtime equivalent.
    loopCondition: gauge<'loop' | 'type' | 'status'>(registry, 'kubeloop_loop_condition', 'A Loop\'s status conditions: 1 for the condition\'s current status, 0 for the others', ['loop', 'type', 'status']),
    reconcileDuration: exemplarLatencyHistogram(registry, 'kubeloop_router_reconcile_duration_seconds', 'One reconcile: call plus applying actions, by outcome (sub-millisecond buckets)', ['loop', 'result']),
    functionCalls: counter(registry, 'kubeloop_router_function_calls_total', 'Function calls by HTTP status class or failure', ['loop', 'code']),
    loopStartsThrottled: counter(registry, 'kubeloop_router_loop_starts_throttled_total', 'Loop (re)starts held back because their namespace started Loops faster than --tenant-loop-starts-qps/-burst allow', []),
    ownWriteSkips: counter(registry, 'kubeloop_router_own_write_skips_total', 'Calls not made: the event was exactly the result of the router\'s own patch', ['loop']),
    conflictReplays: counter(registry, 'kubeloop_router_conflict_replays_total', 'Calls not made: an answer whose write conflicted was applied again to a primary changed only in resourceVersion/managedFields', ['loop']),
    functionBatches: histogram<'loop'>(registry, 'kubeloop_router_function_batch_size', 'Calls per batched HTTP request to a function (spec.function.batch); single calls are not observed', ['loop'], [2, 4, 8, 16, 32, 64]),
    functionLatency: exemplarLatencyHistogram(registry, 'kubeloop_router_function_call_seconds', 'Function call round trip', ['loop']),
    actions: counter(registry, 'kubeloop_router_actions_total', 'Actions applied, by op and result', ['loop', 'op', 'result']),
    refusals: counter(registry, 'kubeloop_router_authority_refusals_total', 'Actions refused for touching objects outside the Loop', ['loop']),
    shadowCalls: counter(registry, 'kubeloop_router_shadow_calls_total', 'Calls offered to Loops\' shadow versions, by result: agreed, diverged (by effect, as kubeloop replay compares), shadow_failed (the shadow failed where the live call answered; also a divergence), live_failed (not compared), dropped (the shadow\'s maxConcurrency was reached), unresolved (its ref does not resolve)', ['loop', 'result']),
    canaryCalls: counter(registry, 'kubeloop_router_canary_calls_total', 'Calls sent to Loops\' canary versions, by result: ok or error (what spends the error budget)', ['loop', 'result']),
    canaryRollbacks: counter(registry, 'kubeloop_router_canary_rollbacks_total', 'Canaries rolled back because their error budget was spent', ['loop']),
    watchRestarts: counter(registry, 'kubeloop_router_watch_restarts_total', 'Informer restarts, by reason', ['resource', 'reason']),
    watchedObjects: gauge(registry, 'kubeloop_router_watched_objects', 'Objects in the informer caches', ['resource']),
    informerEvents: counter(registry, 'kubeloop_router_informer_events_total', 'Objects added, changed or deleted in the informer caches, from lists and watches (a sharded member\'s primaries: resource "... (share)")', ['resource']),
    historyFileLines: counter(registry, 'kubeloop_router_history_file_lines_total', 'Flight-recorder entries appended to the history files (--history-dir)'),
    historyFileDropped: counter(registry, 'kubeloop_router_history_file_dropped_total', 'Flight-recorder entries not written to the history files, by reason: error (the write failed: disk full, directory not writable), behind (the buffer of entries waiting for the disk was full), too-large (one entry larger than a file)', ['reason']),
    eventsDropped: counter(registry, 'kubeloop_router_events_dropped_total', "Events not written: over their tenant's share of the event rate (source function: a function's event action; router: the router's own warnings)", ['tenant', 'source']),
    // Not by resource: at 1,000 tenants that is 2,000 series for a figure read as a whole (what a router at rest does).
    watchBookmarks: counter(registry, 'kubeloop_router_watch_bookmarks_total', 'Watch bookmarks received: the API server\'s progress marks, about one a minute on every open watch however quiet (kubeloop_router_informers), nothing changed'),
    objectsRefused: counter(registry, 'kubeloop_router_objects_refused_total', 'Watched objects over --max-object-values, never cached', ['resource']),
    informers: gauge(registry, 'kubeloop_router_informers', 'Informers (one list and watch each) open, by resource: one per kind, cache mode and namespace scope, whatever related entries project', ['resource']),
    rbacWatch: gauge(registry, 'kubeloop_router_rbac_watch', "1 while the router watches RBAC and reviews a Loop's access again within seconds of a change; 0 while only the --access-review-seconds timer does (the router may not list and watch roles, rolebindings, clusterroles and clusterrolebindings; its log says why)"),
    clusterWideWatches: gauge(registry, 'kubeloop_router_cluster_wide_watches', 'Kinds opted in with --cluster-wide-watch, by how they are watched: state="cluster-wide" (one informer for every namespace) or "per-namespace" (the router may not list and watch them cluster-wide; its log says why)', ['resource', 'state']),
    cachedBytes: new Gauge<'tenant'>({
      name: 'kubeloop_router_cached_bytes',
      help: 'JSON bytes of the objects in the informer caches, by tenant: the namespace a namespaced watch lists (or, for a --cluster-wide-watch kind, each object\'s namespace), `cluster` for other cluster-wide watches',
      labelNames: ['tenant'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [tenant, bytes] of cacheProbe?.() ?? []) this.set({ tenant }, bytes);
      },
    }),
    requestsTooLarge: counter(registry, 'kubeloop_router_requests_too_large_total', 'Requests never built or sent: their related objects would exceed a cap (--max-related-objects-per-entry, --max-related-objects-per-request, --max-related-bytes-per-request)', ['loop']),
    requestBytesInFlight: gauge(registry, 'kubeloop_router_request_bytes_in_flight', 'Estimated bytes of the requests being sent or awaiting their reply, by tenant (at most --max-request-bytes-in-flight together)', ['tenant']),
    /** The informer registry's cached bytes per tenant label, read at each scrape. */
    watchCaches(probe: () => Iterable<[string, number]>): void {
      cacheProbe = probe;
    },
    /** Shows a Loop's queue in the workqueue and worker gauges until the returned function is called. */
    watchQueue(loop: string, probe: QueueProbe, maxConcurrency: number): () => void {
      const queue = { probe, maxConcurrency };
      probes.set(loop, queue);
      // Zero every result up front, as controller-runtime does, so rate() sees the first error.
      for (const result of RECONCILE_RESULTS) this.reconcileTotal.inc({ controller: loop, result }, 0);
      this.reconcileErrors.inc({ controller: loop }, 0);
      return () => {
        if (probes.get(loop) === queue) probes.delete(loop);
      };
    },
    /** Records one Loop's Ready condition (status True or False). */
    setLoopReady(loop: string, ready: boolean): void {
      this.setLoopCondition(loop, 'Ready', ready);
    },
    /** Records one of a Loop's conditions (Ready, ShadowDiverged, CanaryRolledBack); undefined removes it. */
    setLoopCondition(loop: string, type: string, status: boolean | undefined): void {
      // Every answered reconcile reports Ready again: the two series are set only when the status changes.
      const key = `${loop}\n${type}`;
      if (status === undefined) {
        shownConditions.delete(key);
        for (const s of ['True', 'False']) this.loopCondition.remove({ loop, type, status: s });
        return;
      }
      if (shownConditions.get(key) === status) return;
      shownConditions.set(key, status);
      this.loopCondition.set({ loop, type, status: 'True' }, status ? 1 : 0);
      this.loopCondition.set({ loop, type, status: 'False' }, status ? 0 : 1);
    },
    forgetLoop(loop: string): void {
      for (const type of ['Ready', 'Throttled', 'StartThrottled', 'ShadowDiverged', 'CanaryRolledBack']) this.setLoopCondition(loop, type, undefined);
    },
  };
}

/** One Loop's hot-path metrics, bound to its labels once: no label hashing or allocation per key. */
export function loopMetrics(metrics: RouterMetrics, loop: string) {
  const queue = { name: loop, controller: loop };
  return {
    adds: metrics.queueAdds.labels(queue),
    retries: metrics.queueRetries.labels(queue),
    queueWait: metrics.queueWait.labels(queue),
    workDuration: metrics.workDuration.labels(queue),
    reconcileTime: metrics.reconcileTime.labels({ controller: loop }),
    errors: metrics.reconcileErrors.labels({ controller: loop }),
    results: Object.fromEntries(RECONCILE_RESULTS.map((result) => [result, metrics.reconcileTotal.labels({ controller: loop, result })])) as Record<ReconcileResult, ReturnType<RouterMetrics['reconcileTotal']['labels']>>,
  };
}
export type LoopMetrics = ReturnType<typeof loopMetrics>;

/** controller-runtime's `result` label values. */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue', 'requeue_after'] as const;
export type ReconcileResult = (typeof RECONCILE_RESULTS)[number];

/** Feeds rest_client_requests_total and rest_client_request_duration_seconds from a KubeClient. */
export function restClientObserver(metrics: RouterMetrics): (sample: KubeRequestSample) => void {
  return (sample) => {
    metrics.restRequests.inc({ code: sample.code, method: sample.method, host: sample.host });
    metrics.restLatency.observe({ verb: sample.method, host: sample.host }, sample.seconds);
  };
}

/** "2xx", "4xx", "429", "5xx", "timeout", "unreachable", "invalid", "refused", "overloaded": bounded, unlike raw status codes. */
export function callCode(kind: string, status: number | undefined, reason?: string): string {
  if (kind === 'throttled') return '429';
  if (reason === 'Timeout') return 'timeout';
  if (reason === 'Unreachable') return 'unreachable';
  if (reason === 'InvalidResponse') return 'invalid';
  if (reason === 'AddressRefused') return 'refused';
  if (reason === 'Overloaded') return 'overloaded';
  if (status === undefined) return 'error';
  return `${Math.floor(status / 100)}xx`;
}
