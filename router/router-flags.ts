// The flags of `kubeloop router`: the numeric settings' table (variable, one default, range), the parseArgs
// options and the usage text, whose defaults come from the table (router-config.ts reads and checks the values).
import { DEFAULT_TRACE_SAMPLING_RATIO, SERVER_DEFAULTS, SERVER_FLAG_OPTIONS } from '../lib/server/server-settings.ts';
import { FUNCTION_URL_FLAG_OPTIONS, FUNCTION_URL_USAGE } from '../lib/config/function-url-policy.ts';
import { DEFAULT_TENANT_WEIGHT } from './base/tenant-weights.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../lib/contract/json-depth.ts';
import { DEFAULT_MAX_ACTIONS_PER_REPLY, DEFAULT_MAX_RESPONSE_BYTES } from './reconcile/dispatch.ts';
import { DEFAULT_FAIR_API_LIMIT, DEFAULT_MAX_CALLS_IN_FLIGHT } from './base/fairness.ts';
import { DEFAULT_LABELLED_TENANTS } from './base/tenant-metrics.ts';
import { DEFAULT_LABELLED_LOOPS } from './base/router-metrics.ts';
import { DEFAULT_REQUEST_CAPS } from './base/request-caps.ts';
import { DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT } from './base/request-byte-budget.ts';
import { DEFAULT_MAX_LOOPS_PER_TENANT } from './loops/tenant-loop-limit.ts';
import { DEFAULT_TENANT_LOOP_STARTS } from './loops/tenant-start-limit.ts';
import { DEFAULT_HISTORY_LIMITS } from './reconcile/flight-recorder.ts';
import { DEFAULT_HISTORY_FILE_MAX_BYTES, DEFAULT_HISTORY_FILES } from './history/history-files.ts';
import { DEFAULT_HTTP2_WRITES, DEFAULT_ROUTER_RATE_LIMIT } from './router-options.ts';
import { DEFAULT_LEASE_DURATION_MS } from './leader-election.ts';
import { DEFAULT_MIN_REQUEUE_MS } from './reconcile/requeue-floor.ts';
import { DEFAULT_ACCESS_REVIEW_MS, DEFAULT_UNWATCHED_ACCESS_REVIEW_MS } from './loops/loop-access.ts';
import { DEFAULT_EXPECTATIONS_TIMEOUT_MS } from './apply/expectations.ts';
import { DEFAULT_BOOKMARKED_WATCH_TIMEOUT_SECONDS, DEFAULT_WATCH_SILENCE_SECONDS, DEFAULT_WATCH_TIMEOUT_SECONDS } from '../lib/kube/informer.ts';

/** A numeric setting: its environment variable (if any), its one default and its range (checked at start-up). */
export interface RangeSetting {
  env?: string;
  default: number;
  min: number;
  max: number;
  /** Fractions allowed (a rate, a number of seconds). */
  fraction?: boolean;
}

/**
 * Every numeric setting of the router, by flag: the one place its variable, default and range are written.
 * router-config.ts reads them with readRange; the usage below shows each default from here.
 */
export const ROUTER_RANGES = {
  'lease-duration-seconds': { default: DEFAULT_LEASE_DURATION_MS / 1000, min: 3, max: 600 },
  qps: { env: 'KUBELOOP_API_QPS', default: DEFAULT_ROUTER_RATE_LIMIT.qps, min: 0, max: 10_000, fraction: true },
  burst: { env: 'KUBELOOP_API_BURST', default: DEFAULT_ROUTER_RATE_LIMIT.burst, min: 1, max: 100_000 },
  'loop-qps': { env: 'KUBELOOP_LOOP_API_QPS', default: 0, min: 0, max: 10_000, fraction: true },
  'loop-burst': { env: 'KUBELOOP_LOOP_API_BURST', default: 100, min: 1, max: 100_000 },
  'max-calls-in-flight': { env: 'KUBELOOP_MAX_CALLS_IN_FLIGHT', default: DEFAULT_MAX_CALLS_IN_FLIGHT, min: 0, max: 1_000_000 },
  'function-connections': { env: 'KUBELOOP_FUNCTION_CONNECTIONS', default: 0, min: 0, max: 1_000_000 },
  'fair-api-qps': { env: 'KUBELOOP_FAIR_API_QPS', default: DEFAULT_FAIR_API_LIMIT.qps, min: 0, max: 100_000, fraction: true },
  'fair-api-burst': { env: 'KUBELOOP_FAIR_API_BURST', default: DEFAULT_FAIR_API_LIMIT.burst, min: 1, max: 1_000_000 },
  'tenant-metrics-labels': { env: 'KUBELOOP_TENANT_METRICS_LABELS', default: DEFAULT_LABELLED_TENANTS, min: 1, max: 10_000 },
  'loop-metrics-labels': { env: 'KUBELOOP_LOOP_METRICS_LABELS', default: DEFAULT_LABELLED_LOOPS, min: 1, max: 100_000 },
  'min-requeue-seconds': { env: 'KUBELOOP_MIN_REQUEUE_SECONDS', default: DEFAULT_MIN_REQUEUE_MS / 1000, min: 0.1, max: 3600, fraction: true },
  'access-review-seconds': { env: 'KUBELOOP_ACCESS_REVIEW_SECONDS', default: DEFAULT_ACCESS_REVIEW_MS / 1000, min: 10, max: 86_400 },
  'max-loops-per-tenant': { env: 'KUBELOOP_MAX_LOOPS_PER_TENANT', default: DEFAULT_MAX_LOOPS_PER_TENANT, min: 0, max: 100_000 },
  'tenant-loop-starts-qps': { env: 'KUBELOOP_TENANT_LOOP_STARTS_QPS', default: DEFAULT_TENANT_LOOP_STARTS.qps, min: 0, max: 10_000, fraction: true },
  'tenant-loop-starts-burst': { env: 'KUBELOOP_TENANT_LOOP_STARTS_BURST', default: DEFAULT_TENANT_LOOP_STARTS.burst, min: 1, max: 100_000 },
  'max-object-values': { env: 'KUBELOOP_MAX_OBJECT_VALUES', default: DEFAULT_MAX_OBJECT_VALUES, min: 1000, max: 100_000_000 },
  'max-related-objects-per-entry': { env: 'KUBELOOP_MAX_RELATED_OBJECTS_PER_ENTRY', default: DEFAULT_REQUEST_CAPS.objectsPerEntry, min: 1, max: 1_000_000 },
  'max-related-objects-per-request': { env: 'KUBELOOP_MAX_RELATED_OBJECTS_PER_REQUEST', default: DEFAULT_REQUEST_CAPS.objectsPerRequest, min: 1, max: 1_000_000 },
  'max-related-bytes-per-request': { env: 'KUBELOOP_MAX_RELATED_BYTES_PER_REQUEST', default: DEFAULT_REQUEST_CAPS.relatedBytesPerRequest, min: 1024, max: 1024 * 1024 * 1024 },
  'max-request-bytes-in-flight': { env: 'KUBELOOP_MAX_REQUEST_BYTES_IN_FLIGHT', default: DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT, min: 64 * 1024, max: 16 * 1024 * 1024 * 1024 },
  'watch-timeout-seconds': { default: DEFAULT_WATCH_TIMEOUT_SECONDS, min: 1, max: 3600 },
  'bookmarked-watch-timeout-seconds': { default: DEFAULT_BOOKMARKED_WATCH_TIMEOUT_SECONDS, min: 1, max: 3600 },
  // The API server's watch cache sends a bookmark about every 60 s: a shorter silence would end healthy quiet watches.
  'watch-silence-seconds': { default: DEFAULT_WATCH_SILENCE_SECONDS, min: 90, max: 3600 },
  'expectations-timeout-seconds': { default: DEFAULT_EXPECTATIONS_TIMEOUT_MS / 1000, min: 1, max: 3600 },
  'api-timeout-seconds': { default: 30, min: 1, max: 3600 },
  'max-actions-per-reply': { env: 'KUBELOOP_MAX_ACTIONS_PER_REPLY', default: DEFAULT_MAX_ACTIONS_PER_REPLY, min: 1, max: 100_000 },
  'max-reply-bytes': { env: 'KUBELOOP_MAX_REPLY_BYTES', default: DEFAULT_MAX_RESPONSE_BYTES, min: 1024, max: 1024 * 1024 * 1024 },
  'history-per-object': { env: 'KUBELOOP_HISTORY_PER_OBJECT', default: DEFAULT_HISTORY_LIMITS.perObject, min: 0, max: 1000 },
  'history-objects': { env: 'KUBELOOP_HISTORY_OBJECTS', default: DEFAULT_HISTORY_LIMITS.objects, min: 1, max: 1_000_000 },
  'history-objects-per-tenant': { env: 'KUBELOOP_HISTORY_OBJECTS_PER_TENANT', default: DEFAULT_HISTORY_LIMITS.objectsPerTenant, min: 1, max: 1_000_000 },
  'history-file-max-bytes': { env: 'KUBELOOP_HISTORY_FILE_MAX_BYTES', default: DEFAULT_HISTORY_FILE_MAX_BYTES, min: 4096, max: 1 << 30 },
  'history-files': { env: 'KUBELOOP_HISTORY_FILES', default: DEFAULT_HISTORY_FILES, min: 1, max: 100 },
  // 50: old space grows to 1.5x what survived the last major GC, not up to 4x; ~20 MiB off the peak with 2,000
  // pods at no measured CPU cost (docs/performance.md, "Router peak RSS with 2,000 pods").
  'heap-growing-percent': { env: 'KUBELOOP_HEAP_GROWING_PERCENT', default: 50, min: 0, max: 300 },
} as const satisfies Record<string, RangeSetting>;

export type RangeFlag = keyof typeof ROUTER_RANGES;

/** A true/false setting: its environment variable and its one default; `--flag=false` turns a default-on one off. */
export interface SwitchSetting {
  env: string;
  default: boolean;
}

/** Every true/false setting of the router read with a value (`--flag=true|false`), by flag. */
export const ROUTER_SWITCHES = {
  'http2-writes': { env: 'KUBELOOP_HTTP2_WRITES', default: DEFAULT_HTTP2_WRITES },
  'sharding-server-side': { env: 'KUBELOOP_SHARDING_SERVER_SIDE', default: true },
  'watch-list': { env: 'KUBELOOP_WATCH_LIST', default: true },
} as const satisfies Record<string, SwitchSetting>;

export type SwitchFlag = keyof typeof ROUTER_SWITCHES;

/** The router's other defaults (the ops server's, text settings): router-config.ts and the usage read them here. */
export const ROUTER_DEFAULTS = {
  port: 8081,
  host: SERVER_DEFAULTS.host,
  // 16 KiB: the ops server takes no request bodies of any size (probes, scrapes).
  'body-limit-bytes': 16 * 1024,
  'drain-delay-seconds': SERVER_DEFAULTS.drainDelaySeconds,
  'log-level': SERVER_DEFAULTS.logLevel,
  'lease-namespace': 'kubeloop-system',
  'lease-name': 'kubeloop-router',
  'trace-sampling-ratio': DEFAULT_TRACE_SAMPLING_RATIO,
} as const;

const d = (flag: RangeFlag): number => ROUTER_RANGES[flag].default;
const o = (flag: keyof typeof ROUTER_DEFAULTS): string | number => ROUTER_DEFAULTS[flag];

/** parseArgs' options: every flag the router takes. */
export const ROUTER_FLAG_OPTIONS = {
      ...SERVER_FLAG_OPTIONS,
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      record: { type: 'string' },
      'shadow-fixtures': { type: 'string' },
      'leader-elect': { type: 'boolean' },
      sharding: { type: 'boolean' },
      'sharding-server-side': { type: 'string' },
      'lease-namespace': { type: 'string' },
      'lease-name': { type: 'string' },
      'lease-duration-seconds': { type: 'string' },
      identity: { type: 'string' },
      qps: { type: 'string' },
      burst: { type: 'string' },
      'http2-writes': { type: 'string' },
      'watch-list': { type: 'string' },
      loops: { type: 'string' },
      'loop-selector': { type: 'string' },
      'watch-timeout-seconds': { type: 'string' },
      'bookmarked-watch-timeout-seconds': { type: 'string' },
      'watch-silence-seconds': { type: 'string' },
      'expectations-timeout-seconds': { type: 'string' },
      'api-timeout-seconds': { type: 'string' },
      'loop-qps': { type: 'string' },
      'loop-burst': { type: 'string' },
      'max-calls-in-flight': { type: 'string' },
      'function-connections': { type: 'string' },
      'fair-api-qps': { type: 'string' },
      'fair-api-burst': { type: 'string' },
      'tenant-weights': { type: 'string' },
      'tenant-metrics-labels': { type: 'string' },
      'loop-metrics-labels': { type: 'string' },
      'min-requeue-seconds': { type: 'string' },
      'access-review-seconds': { type: 'string' },
      'max-object-values': { type: 'string' },
      'cluster-wide-watch': { type: 'string' },
      'max-related-objects-per-entry': { type: 'string' },
      'max-related-objects-per-request': { type: 'string' },
      'max-related-bytes-per-request': { type: 'string' },
      'max-request-bytes-in-flight': { type: 'string' },
      'connect-services-to': { type: 'string' },
      ...FUNCTION_URL_FLAG_OPTIONS,
      'max-actions-per-reply': { type: 'string' },
      'max-reply-bytes': { type: 'string' },
      'history-per-object': { type: 'string' },
      'history-objects': { type: 'string' },
      'history-objects-per-tenant': { type: 'string' },
      'max-loops-per-tenant': { type: 'string' },
      'tenant-loop-starts-qps': { type: 'string' },
      'tenant-loop-starts-burst': { type: 'string' },
      'history-dir': { type: 'string' },
      'history-file-max-bytes': { type: 'string' },
      'history-files': { type: 'string' },
      'history-api-port': { type: 'string' },
      'history-tls-cert-file': { type: 'string' },
      'history-tls-key-file': { type: 'string' },
      'deny-function-network': { type: 'string', multiple: true },
      'deny-loopback-port': { type: 'string', multiple: true },
      'heap-growing-percent': { type: 'string' },
} as const;

export const ROUTER_USAGE = `usage: kubeloop router [options]

  --kubeconfig PATH                 (KUBECONFIG; in-cluster service account when unset)
  --context NAME                    context inside the kubeconfig
  --port ${o('port')} --host ${o('host')}        ops server: /healthz /readyz /metrics (KUBELOOP_ROUTER_PORT, HOST)
  --drain-delay-seconds ${o('drain-delay-seconds')}           on SIGTERM: fail /readyz, wait, then close (KUBELOOP_DRAIN_DELAY_SECONDS)
  --body-limit-bytes ${o('body-limit-bytes')}          accepted for compatibility: the ops server reads no request body (KUBELOOP_BODY_LIMIT_BYTES)
  --record DIR                      write every request+response as a fixture (KUBELOOP_RECORD_DIR)
  --shadow-fixtures DIR             write shadows' divergences as fixture pairs, the newest 50 per Loop (KUBELOOP_SHADOW_FIXTURES_DIR)
  --leader-elect                    hold a coordination.k8s.io Lease; standbys wait (KUBELOOP_LEADER_ELECT=true)
  --sharding                        every replica reconciles its share of the keys; a member Lease each (KUBELOOP_SHARDING=true)
  --sharding-server-side=${ROUTER_SWITCHES['sharding-server-side'].default}       false: members receive every primary and filter their share themselves, even where the API
                                    server could list and watch only the share (KUBELOOP_SHARDING_SERVER_SIDE)
  --lease-namespace ${o('lease-namespace')}  (KUBELOOP_NAMESPACE, POD_NAMESPACE)
  --lease-name ${o('lease-name')}      the leader Lease, or with --sharding the group of member Leases (KUBELOOP_LEASE_NAME)
  --lease-duration-seconds ${d('lease-duration-seconds')}       a standby (or the other members) takes over within this time of a death
  --identity NAME                   lease holder identity (POD_NAME; host name + pid by default)
  --qps ${d('qps')} --burst ${d('burst')}              the router's own API rate limit: informers, discovery, status (KUBELOOP_API_QPS, KUBELOOP_API_BURST)
  --http2-writes=${ROUTER_SWITCHES['http2-writes'].default}               API writes over node:http2 (cheaper per write; reads and watches over undici); false: all over undici (KUBELOOP_HTTP2_WRITES)
  --watch-list=${ROUTER_SWITCHES['watch-list'].default}                 fill each cache with one WatchList request (the state streamed as events) where the API server
                                    serves it; false: a paged list, then a watch (KUBELOOP_WATCH_LIST)
  --loop-qps ${d('loop-qps')} --loop-burst ${d('loop-burst')}     each Loop's own API cap before its tenant's share, 0: none (KUBELOOP_LOOP_API_QPS, KUBELOOP_LOOP_API_BURST)
  --max-calls-in-flight ${d('max-calls-in-flight')}         function calls in flight across all Loops, shared fairly by tenant; 0: no cap (KUBELOOP_MAX_CALLS_IN_FLIGHT)
  --function-connections ${d('function-connections')}        connections per function origin; 0: one per call the cap on calls in flight admits, at least 64 (KUBELOOP_FUNCTION_CONNECTIONS)
  --fair-api-qps ${d('fair-api-qps')} --fair-api-burst ${d('fair-api-burst')}  the API budget all Loops share fairly by tenant; 0: off, each Loop 50/100 on its own (KUBELOOP_FAIR_API_QPS, KUBELOOP_FAIR_API_BURST)
  --tenant-weights ns=4,ns2=0.5     tenant weights in both shares (ClusterLoops: "_cluster"); unnamed ones ${DEFAULT_TENANT_WEIGHT} (KUBELOOP_TENANT_WEIGHTS)
  --tenant-metrics-labels ${d('tenant-metrics-labels')}        tenants with their own metrics label, the rest "other" (KUBELOOP_TENANT_METRICS_LABELS)
  --loop-metrics-labels ${d('loop-metrics-labels')}         Loops with their own loop/controller metrics label (histograms too), the rest "other" (KUBELOOP_LOOP_METRICS_LABELS)
  --min-requeue-seconds ${d('min-requeue-seconds')}           floor on requeueAfterSeconds, retryAfterSeconds and Retry-After (KUBELOOP_MIN_REQUEUE_SECONDS)
  --access-review-seconds ${d('access-review-seconds')}      how often each Loop's ServiceAccount rights are reviewed again whatever RBAC does; an RBAC
                                      change brings its own review within seconds; default ${DEFAULT_UNWATCHED_ACCESS_REVIEW_MS / 1000} when the router
                                      may not list and watch RBAC (KUBELOOP_ACCESS_REVIEW_SECONDS)
  --max-loops-per-tenant ${d('max-loops-per-tenant')}         namespaced Loops run per namespace, the oldest first; the rest Ready=False TenantLimitExceeded
                                      until older ones are deleted; ClusterLoops not counted; 0: no limit (KUBELOOP_MAX_LOOPS_PER_TENANT)
  --tenant-loop-starts-qps ${d('tenant-loop-starts-qps')} --tenant-loop-starts-burst ${d('tenant-loop-starts-burst')}  Loop (re)starts per namespace; the rest wait their turn, Ready=False
                                      StartThrottled; ClusterLoops not limited; 0: no limit (KUBELOOP_TENANT_LOOP_STARTS_QPS, KUBELOOP_TENANT_LOOP_STARTS_BURST)
${FUNCTION_URL_USAGE}
  --connect-services-to 127.0.0.1    outside the cluster only (dev, tests): call cluster Service URLs at this IP, same port; name.namespace=IP for one Service (comma-separated; KUBELOOP_CONNECT_SERVICES_TO)
  --max-object-values ${d('max-object-values')}        watched objects holding more JSON values are never cached: a Warning event, a metric (KUBELOOP_MAX_OBJECT_VALUES)
  --cluster-wide-watch configmaps,deployments.apps  list and watch these kinds once for every namespace, each namespaced Loop seeing only
                                      its own, where the router's RBAC allows it; else per namespace (KUBELOOP_CLUSTER_WIDE_WATCH)
  --max-related-objects-per-entry ${d('max-related-objects-per-entry')}    related objects one spec.related or requires entry may send (KUBELOOP_MAX_RELATED_OBJECTS_PER_ENTRY)
  --max-related-objects-per-request ${d('max-related-objects-per-request')}  related objects one request may send, all entries together (KUBELOOP_MAX_RELATED_OBJECTS_PER_REQUEST)
  --max-related-bytes-per-request ${d('max-related-bytes-per-request')} their JSON bytes per request; over any of the three: RequestTooLarge, never sent (KUBELOOP_MAX_RELATED_BYTES_PER_REQUEST)
  --max-request-bytes-in-flight ${d('max-request-bytes-in-flight')}  request bytes being sent or awaiting a reply, all Loops together, divided by tenant (KUBELOOP_MAX_REQUEST_BYTES_IN_FLIGHT)
  --loops FILE                      run the Loops in this YAML file instead of watching Loop objects
  --loop-selector k=v[,k=v]         only Loop objects with these labels (KUBELOOP_LOOP_SELECTOR)
  --watch-timeout-seconds ${d('watch-timeout-seconds')}       server-side watch timeout (randomised up to 2x) until the server has sent a bookmark;
                                      a watch still open 30 s past it is dead: ended, watched again; a WatchList
                                      without its initial-events-end bookmark by then is ignored: lists instead
  --bookmarked-watch-timeout-seconds ${d('bookmarked-watch-timeout-seconds')}  the same once it has, and for a WatchList (fewer renewals at rest)
  --watch-silence-seconds ${d('watch-silence-seconds')}       once it has, a watch that hears nothing this long, bookmarks included, is dead
  --expectations-timeout-seconds ${d('expectations-timeout-seconds')}  how long an owner waits for the watch to show its creates/deletes
  --api-timeout-seconds ${d('api-timeout-seconds')}          at start-up: exit 1 when the API server has not answered within this time
  --max-actions-per-reply ${d('max-actions-per-reply')}      more is InvalidResponse, nothing applied (KUBELOOP_MAX_ACTIONS_PER_REPLY)
  --max-reply-bytes ${d('max-reply-bytes')}        a larger reply is cut off as it streams (KUBELOOP_MAX_REPLY_BYTES)
  --history-per-object ${d('history-per-object')}           reconciles the flight recorder keeps per object, 0: off (KUBELOOP_HISTORY_PER_OBJECT)
  --history-objects ${d('history-objects')}            objects it keeps a history for, least recently reconciled dropped first (KUBELOOP_HISTORY_OBJECTS)
  --history-objects-per-tenant ${d('history-objects-per-tenant')}  objects one tenant (namespace; all ClusterLoops) keeps; over the total, the tenant holding the
                                      most loses its least recent (KUBELOOP_HISTORY_OBJECTS_PER_TENANT)
  --history-dir DIR                 append every finished reconcile's entry to DIR/history.jsonl, rotated (KUBELOOP_HISTORY_DIR)
  --history-file-max-bytes ${d('history-file-max-bytes')} rotate the file before it grows over this (KUBELOOP_HISTORY_FILE_MAX_BYTES)
  --history-files ${d('history-files')}                 files kept, the current one included: the disk used stays under files x max bytes (KUBELOOP_HISTORY_FILES)
  --history-api-port PORT           serve the history API (APIService v1alpha1.history.kubeloop.dev) here over HTTPS (KUBELOOP_HISTORY_API_PORT)
  --history-tls-cert-file PATH      its serving certificate and key, trusted by the APIService (KUBELOOP_HISTORY_TLS_CERT_FILE,
  --history-tls-key-file PATH         KUBELOOP_HISTORY_TLS_KEY_FILE)
  --otlp-endpoint URL               OTLP/HTTP endpoint; unset: tracing off, no SDK loaded (OTEL_EXPORTER_OTLP_ENDPOINT)
  --otlp-headers k=v,...            export headers (OTEL_EXPORTER_OTLP_HEADERS)
  --trace-sampling-ratio ${o('trace-sampling-ratio')}          share of new traces sampled, parent-based (KUBELOOP_TRACE_SAMPLING_RATIO)
  --deny-function-network CIDR      never connect to a function there (repeatable; KUBELOOP_DENY_FUNCTION_NETWORKS, comma-separated)
  --deny-loopback-port PORT         with --allow-loopback-functions: never call a function on this loopback port (repeatable; kubeloop dev: the control plane's)
  --heap-growing-percent ${d('heap-growing-percent')}        V8's old space grows by this share over what the last full GC kept before the next one;
                                      0: V8's own factor, up to 4x on a large machine (KUBELOOP_HEAP_GROWING_PERCENT)
  --log-level ${o('log-level')}                  (KUBELOOP_LOG_LEVEL)`;
