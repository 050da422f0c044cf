// Configuration of `kubeloop router`: flags (router-flags.ts) win over environment variables; every value is
// checked at start-up and a bad one is reported with the flag or variable that set it.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pickSetting, settingBoolean, settingInteger, settingNumber } from '../lib/config/settings.ts';
import { readServerSettings, type ServerSettings } from '../lib/server/server-settings.ts';
import { ROUTER_DEFAULTS, ROUTER_FLAG_OPTIONS, ROUTER_RANGES, ROUTER_SWITCHES, ROUTER_USAGE, type RangeFlag, type RangeSetting, type SwitchFlag } from './router-flags.ts';
import type { Loop } from '../api/loop.ts';
import { DEFAULT_FUNCTION_URL_POLICY, readFunctionUrlPolicy, type FunctionUrlPolicy } from '../lib/config/function-url-policy.ts';
import { readDeniedLoopbackPorts, readDeniedNetworks } from '../lib/function-client/address-policy.ts';
import { parseServiceAddresses } from '../lib/function-client/service-address.ts';
import { parseLoop } from './base/loop-spec.ts';
import type { RequestCaps } from './base/request-caps.ts';
import type { RateLimit } from '../lib/kube/rate-limiter.ts';
import { parseTenantWeights } from './base/tenant-weights.ts';
import type { FlightRecorderLimits } from './reconcile/flight-recorder.ts';
import type { HistoryFileSettings } from './history/history-files.ts';
import { parseClusterWideWatches, type GroupResource } from './intake/cluster-wide-watch.ts';

export { ROUTER_USAGE };

/** The server settings are the ops server's (/healthz, /readyz, /metrics), read as function and webhook read theirs. */
export interface RouterConfig extends ServerSettings {
  kubeconfig?: string;
  context?: string;
  recordDir?: string;
  /** Where shadows' divergences are written as fixture pairs (`--shadow-fixtures`); none: counted and shown only. */
  shadowFixturesDir?: string;
  leaderElect: boolean;
  /** Every replica reconciles its share of each Loop's keys, with a member Lease each (docs/sharding.md). */
  sharding: boolean;
  /** Ask the API server for each member's share (sharded list and watch) where it supports it; false: filter here. */
  shardingServerSide: boolean;
  leaseNamespace: string;
  leaseName: string;
  leaseDurationSeconds: number;
  identity?: string;
  qps: number;
  burst: number;
  /** API writes over node:http2, reads and watches over undici (--http2-writes). */
  http2Writes: boolean;
  /** Caches filled by one WatchList request where the API server serves it; false: list, then watch (--watch-list). */
  watchList: boolean;
  /** Inline Loops from a YAML file instead of watching Loop objects (clusters without the CRD); readLoopsFile reads it. */
  loopsFile?: string;
  /** Only Loop objects with these labels (`--loop-selector team=a,tier=b`): shards Loops between routers. */
  loopSelector?: Record<string, string>;
  /** Server-side watch timeouts before and after the server has sent a bookmark, and the silence that ends a watch then. */
  watchTimeoutSeconds: number;
  bookmarkedWatchTimeoutSeconds: number;
  watchSilenceSeconds: number;
  /** Watched objects holding more JSON values are never cached. */
  maxObjectValues: number;
  /** Kinds listed and watched once cluster-wide where the router may (--cluster-wide-watch). */
  clusterWideWatches: GroupResource[];
  /** What one request may carry of related objects (over: RequestTooLarge, never sent). */
  requestCaps: RequestCaps;
  /** Request bytes in flight to every function together, divided by tenant weight. */
  maxRequestBytesInFlight: number;
  expectationsTimeoutSeconds: number;
  /** How long start-up waits for the API server to answer before the router exits 1. */
  apiTimeoutSeconds: number;
  /** A reply asking for more actions is InvalidResponse and nothing of it is applied. */
  maxActionsPerReply: number;
  /** A reply body larger than this is cut off as it streams. */
  maxReplyBytes: number;
  /** Where functions may live: cluster Services, the allowed hosts, loopback only with --allow-loopback-functions. */
  urlPolicy: FunctionUrlPolicy;
  /** --connect-services-to: an IP that cluster Service function URLs are called at (router outside the cluster). */
  connectServicesTo: string | undefined;
  /** --deny-function-network: networks no function call connects to, besides the fixed refusals. */
  deniedNetworks: string[];
  /** --deny-loopback-port: in dev, the local control plane's ports. */
  deniedLoopbackPorts: number[];
  /** Floor on requeue and retry delays a function asks for. */
  minRequeueSeconds: number;
  /** Each Loop's own API cap (writes and live reads as its ServiceAccount), before its tenant's share; 0: none. */
  loopQps: number;
  loopBurst: number;
  /** Fairness across tenants (docs/router.md#fairness-across-tenants): 0 turns each off. */
  maxCallsInFlight: number;
  /** Connections per function origin; 0: follow the cap (router/base/fairness.ts, functionConnections). */
  functionConnections: number;
  fairApiQps: number;
  fairApiBurst: number;
  /** --tenant-weights team-a=4,team-b=0.5 (the chart's router.fairness.weights). */
  tenantWeights: Map<string, number>;
  /** Tenants with their own `tenant` metrics label; the rest are `other`. */
  tenantMetricsLabels: number;
  /** Loops with their own `loop` / `controller` metrics label; the rest are `other`. */
  loopMetricsLabels: number;
  /** How often every Loop's access (SubjectAccessReview) is reviewed again whatever RBAC does; undefined: the router's default. */
  accessReviewSeconds: number | undefined;
  /** Namespaced Loops the router runs per namespace, the oldest first; 0: no limit. */
  maxLoopsPerTenant: number;
  /** Loop (re)starts per namespace (a token bucket); qps 0: no limit. */
  tenantLoopStarts: RateLimit;
  /** The flight recorder: reconciles kept per object and objects kept in all (0 reconciles: off). */
  history: Required<FlightRecorderLimits>;
  /** The history API (aggregated API behind the APIService): its HTTPS port and serving certificate; off when undefined. */
  historyApi?: { port: number; certFile: string; keyFile: string };
  /** The rotated history files (every finished entry as a JSON line); off when undefined. */
  historyFiles?: HistoryFileSettings;
  /** V8's old-generation growing factor in percent, set at start (lib/server/heap-growing.ts); 0: V8's own. */
  heapGrowingPercent: number;
}

/** "a=b,c=d" -> { a: 'b', c: 'd' }; the error names the setting and the bad pair. */
export function parseLabelPairs(value: string, setting: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of value.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    const key = pair.slice(0, eq);
    if (eq <= 0 || !/^([a-z0-9.-]+\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(key)) {
      throw new Error(`${setting}: "${pair}" is not key=value with a label key`);
    }
    labels[key] = pair.slice(eq + 1);
  }
  return labels;
}

/**
 * Reads inline Loops (`--loops`); errors name the file, the document and the bad field. yaml is loaded here,
 * only then: a router in a cluster watches Loop objects and never pays its import at start-up.
 */
export async function readLoopsFile(file: string, urlPolicy: FunctionUrlPolicy = DEFAULT_FUNCTION_URL_POLICY): Promise<Loop[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`--loops: cannot read "${file}": ${(error as Error).message}`);
  }
  // yaml is CommonJS under Node: a bundle's import() of it has only a default export (esbuild), as Node's has too.
  const { parseAllDocuments } = (await import('yaml')).default;
  const loops: Loop[] = [];
  for (const [i, doc] of parseAllDocuments(text).entries()) {
    if (doc.errors.length > 0) throw new Error(`--loops: ${file} document ${i + 1}: ${doc.errors[0]?.message}`);
    const loop = doc.toJS() as Loop | null;
    if (!loop) continue;
    if (loop.kind !== 'ClusterLoop' && loop.kind !== 'Loop') throw new Error(`--loops: ${file} document ${i + 1}: kind "${String(loop.kind)}" is not ClusterLoop or Loop`);
    try {
      parseLoop(loop, urlPolicy);
    } catch (error) {
      throw new Error(`--loops: ${file} document ${i + 1}: ${(error as Error).message}`);
    }
    loops.push({ ...loop, metadata: { generation: 1, ...loop.metadata } });
  }
  if (loops.length === 0) throw new Error(`--loops: ${file} holds no Loop`);
  return loops;
}

export function readRouterConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): RouterConfig {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: ROUTER_FLAG_OPTIONS,
  });
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"\n\n${ROUTER_USAGE}`);
  const pick = (flag: Exclude<keyof typeof values, 'deny-function-network' | 'deny-loopback-port'>, ...vars: string[]) => pickSetting(values, env, flag, ...vars);
  const pickRange = (flag: RangeFlag) => {
    const variable: string | undefined = (ROUTER_RANGES[flag] as RangeSetting).env;
    return pick(flag, ...(variable ? [variable] : []));
  };
  const range = (flag: RangeFlag) => inRange(flag, pickRange(flag));
  const switchOn = (flag: SwitchFlag) => settingBoolean(pick(flag, ROUTER_SWITCHES[flag].env), ROUTER_SWITCHES[flag].default);
  const leaderElect = values['leader-elect'] ?? settingBoolean(pick('leader-elect', 'KUBELOOP_LEADER_ELECT'), false);
  const leaseDurationSeconds = range('lease-duration-seconds');
  const sharding = values.sharding ?? settingBoolean(pick('sharding', 'KUBELOOP_SHARDING'), false);
  if (sharding && leaderElect) throw new Error('--sharding and --leader-elect exclude each other: every sharded replica works, none stands by');
  const loopsFile = values.loops;
  const selector = pick('loop-selector', 'KUBELOOP_LOOP_SELECTOR');
  const urlPolicy = readFunctionUrlPolicy(values, env);
  return {
    ...readServerSettings(values, env, { defaultPort: ROUTER_DEFAULTS.port, defaultBodyLimitBytes: ROUTER_DEFAULTS['body-limit-bytes'], minBodyLimitBytes: 1024, maxDrainDelaySeconds: 300, portVariables: ['KUBELOOP_ROUTER_PORT'] }),
    kubeconfig: values.kubeconfig ?? (env.KUBECONFIG || undefined),
    context: values.context,
    recordDir: values.record ?? (env.KUBELOOP_RECORD_DIR || undefined),
    shadowFixturesDir: values['shadow-fixtures'] ?? (env.KUBELOOP_SHADOW_FIXTURES_DIR || undefined),
    leaderElect,
    sharding,
    shardingServerSide: switchOn('sharding-server-side'),
    leaseNamespace: values['lease-namespace'] ?? (env.KUBELOOP_NAMESPACE || env.POD_NAMESPACE || ROUTER_DEFAULTS['lease-namespace']),
    leaseName: values['lease-name'] ?? (env.KUBELOOP_LEASE_NAME || ROUTER_DEFAULTS['lease-name']),
    leaseDurationSeconds,
    identity: values.identity ?? (env.POD_NAME || undefined),
    qps: range('qps'),
    burst: range('burst'),
    http2Writes: switchOn('http2-writes'),
    watchList: switchOn('watch-list'),
    loopsFile,
    loopSelector: selector ? parseLabelPairs(selector.value, selector.setting) : undefined,
    watchTimeoutSeconds: range('watch-timeout-seconds'),
    bookmarkedWatchTimeoutSeconds: range('bookmarked-watch-timeout-seconds'),
    watchSilenceSeconds: range('watch-silence-seconds'),
    maxObjectValues: range('max-object-values'),
    clusterWideWatches: clusterWideWatches(pick('cluster-wide-watch', 'KUBELOOP_CLUSTER_WIDE_WATCH')),
    requestCaps: {
      objectsPerEntry: range('max-related-objects-per-entry'),
      objectsPerRequest: range('max-related-objects-per-request'),
      relatedBytesPerRequest: range('max-related-bytes-per-request'),
    },
    maxRequestBytesInFlight: range('max-request-bytes-in-flight'),
    expectationsTimeoutSeconds: range('expectations-timeout-seconds'),
    apiTimeoutSeconds: range('api-timeout-seconds'),
    maxActionsPerReply: range('max-actions-per-reply'),
    maxReplyBytes: range('max-reply-bytes'),
    urlPolicy,
    connectServicesTo: connectServicesTo(pick('connect-services-to', 'KUBELOOP_CONNECT_SERVICES_TO')),
    deniedNetworks: readDeniedNetworks(values['deny-function-network'], env),
    deniedLoopbackPorts: readDeniedLoopbackPorts(values['deny-loopback-port']),
    minRequeueSeconds: range('min-requeue-seconds'),
    loopQps: range('loop-qps'),
    loopBurst: range('loop-burst'),
    maxCallsInFlight: range('max-calls-in-flight'),
    functionConnections: range('function-connections'),
    fairApiQps: range('fair-api-qps'),
    fairApiBurst: range('fair-api-burst'),
    tenantWeights: tenantWeights(pick('tenant-weights', 'KUBELOOP_TENANT_WEIGHTS')),
    tenantMetricsLabels: range('tenant-metrics-labels'),
    loopMetricsLabels: range('loop-metrics-labels'),
    // Unset: hourly while the router watches RBAC, 5 minutes when it may not (access-review-schedule.ts).
    accessReviewSeconds: pickRange('access-review-seconds') && range('access-review-seconds'),
    maxLoopsPerTenant: range('max-loops-per-tenant'),
    tenantLoopStarts: { qps: range('tenant-loop-starts-qps'), burst: range('tenant-loop-starts-burst') },
    history: {
      perObject: range('history-per-object'),
      objects: range('history-objects'),
      objectsPerTenant: range('history-objects-per-tenant'),
    },
    heapGrowingPercent: range('heap-growing-percent'),
    ...historyFiles(pick('history-dir', 'KUBELOOP_HISTORY_DIR'), pickRange('history-file-max-bytes'), pickRange('history-files'), pickRange('history-per-object')),
    ...historyApi(pick('history-api-port', 'KUBELOOP_HISTORY_API_PORT'), pick('history-tls-cert-file', 'KUBELOOP_HISTORY_TLS_CERT_FILE'), pick('history-tls-key-file', 'KUBELOOP_HISTORY_TLS_KEY_FILE')),
  };
}

/** A numeric setting checked against its entry of ROUTER_RANGES (its one default when nothing set it). */
function inRange(flag: RangeFlag, picked: Setting): number {
  const { default: fallback, min, max, fraction } = ROUTER_RANGES[flag] as RangeSetting;
  return fraction ? settingNumber(picked, fallback, min, max) : settingInteger(picked, fallback, min, max);
}

function clusterWideWatches(setting: { value: string; setting: string } | undefined): GroupResource[] {
  return setting ? parseClusterWideWatches(setting.value, setting.setting) : [];
}

function tenantWeights(setting: { value: string; setting: string } | undefined): Map<string, number> {
  if (!setting) return new Map();
  try {
    return parseTenantWeights(setting.value);
  } catch (error) {
    throw new Error(`${setting.setting}: ${(error as Error).message}`);
  }
}

type Setting = { value: string; setting: string } | undefined;

function historyFiles(dir: Setting, maxBytes: Setting, files: Setting, perObject: Setting): Pick<RouterConfig, 'historyFiles'> {
  if (!dir || dir.value === '') {
    const stray = maxBytes ?? files;
    if (stray) throw new Error(`${stray.setting} is set but --history-dir (KUBELOOP_HISTORY_DIR) is not: no history file is written`);
    return {};
  }
  // The files are fed by the recorder: with it off no entry is assembled.
  if (perObject && Number(perObject.value) === 0) throw new Error(`${dir.setting}: the history files need the flight recorder, which ${perObject.setting}=0 turns off`);
  return {
    historyFiles: {
      dir: dir.value,
      maxBytes: inRange('history-file-max-bytes', maxBytes),
      files: inRange('history-files', files),
    },
  };
}

function historyApi(port: Setting, cert: Setting, key: Setting): Pick<RouterConfig, 'historyApi'> {
  if (!port) {
    const stray = cert ?? key;
    if (stray) throw new Error(`${stray.setting} is set but --history-api-port (KUBELOOP_HISTORY_API_PORT) is not: the history API is off`);
    return {};
  }
  if (!cert || !key) throw new Error(`${port.setting}: the history API serves HTTPS only; set --history-tls-cert-file and --history-tls-key-file too`);
  return { historyApi: { port: settingInteger(port, 0, 0, 65_535), certFile: cert.value, keyFile: key.value } };
}

function connectServicesTo(setting: { value: string; setting: string } | undefined): string | undefined {
  if (!setting) return undefined;
  parseServiceAddresses(setting.value, setting.setting);
  return setting.value;
}
