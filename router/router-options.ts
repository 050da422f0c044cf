// What startRouter takes (RouterOptions, with leader election and sharding) and what it returns (Router):
// the router's programmatic face, for `kubeloop router`, `kubeloop dev`, tests and benchmarks.
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ClusterCredentials } from '../lib/kube/kube-config.ts';
import type { RateLimit } from '../lib/kube/rate-limiter.ts';
import type { DeniedEndpoint } from '../lib/function-client/address-policy.ts';
import type { FunctionUrlPolicy } from '../lib/config/function-url-policy.ts';
import type { Loop } from '../api/loop.ts';
import type { FunctionInvoker, HttpInvokerOptions } from './reconcile/dispatch.ts';
import type { LoopRunner } from './intake/loop-runner.ts';
import type { RouterMetrics } from './base/router-metrics.ts';
import type { ShardStatus } from './sharding/shard-member.ts';
import type { FairnessOptions } from './base/fairness.ts';
import type { RequestCaps } from './base/request-caps.ts';
import type { FlightRecorder, FlightRecorderLimits } from './reconcile/flight-recorder.ts';
import type { HistoryFileSettings } from './history/history-files.ts';
import type { GroupResource } from './intake/cluster-wide-watch.ts';

/**
 * The router's own API limit (informers, discovery, access reviews, Loop status, events) when none is given
 * (--qps, --burst). A guard against the router's own runaway, not a pace: a restart with 1,000 Loops asks ~9
 * requests each, which 50/100 stretched to 177 s (500/1000: 63.6 s, docs/performance.md). controller-runtime
 * dropped its client-side default altogether for the API server's Priority and Fairness; the router keeps a
 * cap because APF sees one client here, the router, whatever the tenant that caused its requests.
 */
export const DEFAULT_ROUTER_RATE_LIMIT: RateLimit = { qps: 500, burst: 1000 };

/** Writes over node:http2 (lib/kube/node-http2-writes.ts): 0.78x the client CPU per PATCH of undici (docs/performance.md). */
export const DEFAULT_HTTP2_WRITES = true;

export interface LeaderElectionConfig {
  namespace: string;
  /** Lease name; kubeloop-router by default. */
  name?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ShardingConfig {
  /** Where the member Leases live. */
  namespace: string;
  /** Members of one group share the keys; kubeloop-router by default (the --lease-name). */
  group?: string;
  /** Ask the API server for each member's share where it supports it (default); false: filter in the member. */
  serverSide?: boolean;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface RouterOptions {
  /** client-node's KubeConfig or what loadKubeConfig returns. */
  kubeConfig: ClusterCredentials;
  /** Inline Loops (`--loops FILE`, tests, benchmarks); when omitted the router watches Loop objects (clusterloops.kubeloop.dev). */
  loops?: Loop[];
  /** Only watched Loop objects whose labels match run here (ignored with inline `loops`). */
  loopSelector?: V1LabelSelector;
  /** Replaces HTTP calls to functions, e.g. an in-process call for benchmarks. */
  invoke?: FunctionInvoker;
  /** The router's own API limit (informers, discovery, Loop status, events); DEFAULT_ROUTER_RATE_LIMIT (500/1000) when omitted. */
  rateLimit?: RateLimit;
  /** Writes (its own and every Loop's) over node:http2, reads and watches over undici; DEFAULT_HTTP2_WRITES when omitted. */
  http2Writes?: boolean;
  /**
   * Each Loop's own cap on what it does as its ServiceAccount, taken before its tenant's share of the shared
   * budget; none by default (qps 0). With `fairness: false`, each Loop's only budget: this, or 50/100 when omitted.
   */
  loopRateLimit?: RateLimit;
  /**
   * Fair shares across tenants of the calls in flight and of the API budget (docs/router.md); on with
   * 256 calls and 500 QPS / burst 1000 when omitted; `false`: every Loop on its own (the behaviour before).
   */
  fairness?: FairnessOptions | false;
  /** Where functions may live; strict (cluster Services only) by default. Tests and `kubeloop dev` allow loopback. */
  urlPolicy?: FunctionUrlPolicy;
  /** Outside the cluster (dev, tests): connect to this IP for cluster Service function URLs (--connect-services-to). */
  connectServicesTo?: string;
  /** Floor on requeue and retry delays a function asks for; 1000 ms by default. */
  minRequeueMs?: number;
  /**
   * How often every Loop's access is reviewed again whatever RBAC does (changes to RBAC bring their own reviews
   * within seconds); by default hourly, or 5 minutes when the router may not watch RBAC.
   */
  accessReviewIntervalMs?: number;
  /** Namespaced Loops run per namespace, the oldest first (--max-loops-per-tenant); 50 by default, 0: no limit. */
  maxLoopsPerTenant?: number;
  /** Loop (re)starts per namespace (--tenant-loop-starts-qps/-burst); 2/s burst 20 by default, qps 0: no limit. */
  tenantLoopStarts?: RateLimit;
  /** Only the holder of the Lease reconciles; others wait as standbys. Off when omitted. */
  leaderElection?: LeaderElectionConfig;
  /** Every replica reconciles its share of the keys (docs/sharding.md); excludes leaderElection. */
  sharding?: ShardingConfig;
  /** Unique per replica (Lease holder, event reportingInstance); the host name by default. */
  identity?: string;
  /** Write every request and response as a fixture into this directory (`--record`). */
  recordDir?: string;
  /** Write shadows' divergences as fixture pairs into this directory (`--shadow-fixtures`). */
  shadowFixturesDir?: string;
  logger?: Logger;
  metrics?: RouterMetrics;
  /** Server-side watch timeout base (randomised up to twice that) until the server has sent a bookmark; the watchdog adds its grace on top. */
  watchTimeoutSeconds?: number;
  /** The same once it has; watches then count silence (--bookmarked-watch-timeout-seconds). */
  bookmarkedWatchTimeoutSeconds?: number;
  /** A watch of a server that sends bookmarks which hears nothing this long is ended and watched again (--watch-silence-seconds). */
  watchSilenceMs?: number;
  /** Fill each cache with one WatchList request where the API server serves it (lib/kube/watch-list.ts); true when omitted. */
  watchList?: boolean;
  watchdogGraceMs?: number;
  /** Watched objects holding more JSON values are never cached (a Warning event, a metric); 100,000 by default. */
  maxObjectValues?: number;
  /** Kinds served to namespaced Loops from one cluster-wide informer where the router may list and watch them so. */
  clusterWideWatches?: readonly GroupResource[];
  /** How long an owner waits for the watch to show its creates/deletes before it is reconciled anyway. */
  expectationsTimeoutMs?: number;
  /** What one request may carry of related objects; DEFAULT_REQUEST_CAPS when omitted. */
  requestCaps?: RequestCaps;
  /** Request bytes in flight to every function together, divided by tenant; DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT when omitted. */
  maxRequestBytesInFlight?: number;
  /** Reply bounds of the HTTP invoker (size, actions per reply); ignored with `invoke`. */
  dispatch?: HttpInvokerOptions;
  /** The flight recorder's bounds (`kubeloop history`); 10 reconciles for each of 1000 objects by default. */
  history?: FlightRecorderLimits;
  /** Every finished flight-recorder entry also appended to rotated files there (`--history-dir`). */
  historyFiles?: HistoryFileSettings;
  /**
   * Addresses no function call may connect to, beyond the fixed ones (link-local, unspecified, multicast,
   * the API server's endpoints): the operator's deny list (`--deny-function-networks`), and in `kubeloop
   * dev` the local control plane's ports.
   */
  deniedEndpoints?: DeniedEndpoint[];
}

export interface Router {
  readonly metrics: RouterMetrics;
  readonly identity: string;
  isLeader(): boolean;
  /**
   * Ready: a standby, or a leader that has read its Loops. A Loop that cannot sync (Forbidden, a CRD not
   * installed) is reported on that Loop's status, not by failing the whole router's readiness.
   */
  ready(): boolean;
  /** Resolves when the named Loop runs with complete caches (this replica must lead). */
  waitForLoop(name: string, timeoutMs?: number): Promise<LoopRunner>;
  loops(): LoopRunner[];
  /** With sharding: this member's views and acknowledgement. */
  shard(): ShardStatus | undefined;
  /** The flight recorder: the last reconciles of each object this replica reconciled. */
  readonly history: FlightRecorder;
  /**
   * The replica whose recorder holds the key's history when it is another one: with sharding the member
   * that owns the key, with leader election (on a standby) the leader.
   */
  historyOwner(loop: string, key: string): Promise<string | undefined>;
  stop(): Promise<void>;
}
