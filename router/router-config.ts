// Configuration of `kubeloop router`: flags (router-flags.ts) win over environment variables; every value is
// checked at start-up and a bad one is reported with the flag or variable that set it.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { pickSetting, settingBoolean, settingInteger, settingNumber } from '../lib/config/settings.ts';
import { readServerSettings, type ServerSettings } from '../lib/server/server-settings.ts';
import { ROUTER_FLAG_OPTIONS, ROUTER_USAGE } from './router-flags.ts';
import type { Loop } from '../api/loop.ts';
import { DEFAULT_FUNCTION_URL_POLICY, readFunctionUrlPolicy, type FunctionUrlPolicy } from '../lib/config/function-url-policy.ts';
import { DEFAULT_MAX_ACTIONS_PER_REPLY, DEFAULT_MAX_RESPONSE_BYTES } from './reconcile/dispatch.ts';
import { readDeniedLoopbackPorts, readDeniedNetworks } from '../lib/function-client/address-policy.ts';
import { parseServiceAddresses } from '../lib/function-client/service-address.ts';
import { parseLoop } from './base/loop-spec.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../lib/contract/json-depth.ts';
import { DEFAULT_FAIR_API_LIMIT, DEFAULT_MAX_CALLS_IN_FLIGHT } from './base/fairness.ts';
import { DEFAULT_LABELLED_TENANTS } from './base/tenant-metrics.ts';
import { DEFAULT_REQUEST_CAPS, type RequestCaps } from './base/request-caps.ts';
import { DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT } from './base/request-byte-budget.ts';
import { parseTenantWeights } from './base/tenant-weights.ts';
import { DEFAULT_MAX_LOOPS_PER_TENANT } from './loops/tenant-loop-limit.ts';
import { DEFAULT_HISTORY_LIMITS, type FlightRecorderLimits } from './reconcile/flight-recorder.ts';
import { DEFAULT_HISTORY_FILE_MAX_BYTES, DEFAULT_HISTORY_FILES, type HistoryFileSettings } from './history/history-files.ts';

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
  /** Inline Loops from a YAML file instead of watching Loop objects (clusters without the CRD). */
  loopsFile?: string;
  loops?: Loop[];
  /** Only Loop objects with these labels (`--loop-selector team=a,tier=b`): shards Loops between routers. */
  loopSelector?: Record<string, string>;
  watchTimeoutSeconds: number;
  /** Watched objects holding more JSON values are never cached. */
  maxObjectValues: number;
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
  fairApiQps: number;
  fairApiBurst: number;
  /** --tenant-weights team-a=4,team-b=0.5 (the chart's router.fairness.weights). */
  tenantWeights: Map<string, number>;
  /** Tenants with their own `tenant` metrics label; the rest are `other`. */
  tenantMetricsLabels: number;
  /** How often every Loop's access (SubjectAccessReview) is reviewed again. */
  accessReviewSeconds: number;
  /** Namespaced Loops the router runs per namespace, the oldest first; 0: no limit. */
  maxLoopsPerTenant: number;
  /** The flight recorder: reconciles kept per object and objects kept in all (0 reconciles: off). */
  history: Required<FlightRecorderLimits>;
  /** The history API (aggregated API behind the APIService): its HTTPS port and serving certificate; off when undefined. */
  historyApi?: { port: number; certFile: string; keyFile: string };
  /** The rotated history files (every finished entry as a JSON line); off when undefined. */
  historyFiles?: HistoryFileSettings;
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

/** Reads inline Loops; errors name the file, the document and the bad field. */
export function readLoopsFile(file: string, urlPolicy: FunctionUrlPolicy = DEFAULT_FUNCTION_URL_POLICY): Loop[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`--loops: cannot read "${file}": ${(error as Error).message}`);
  }
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
  const leaderElect = values['leader-elect'] ?? settingBoolean(pick('leader-elect', 'KUBELOOP_LEADER_ELECT'), false);
  const leaseDurationSeconds = settingInteger(pick('lease-duration-seconds'), 15, 3, 600);
  const sharding = values.sharding ?? settingBoolean(pick('sharding', 'KUBELOOP_SHARDING'), false);
  if (sharding && leaderElect) throw new Error('--sharding and --leader-elect exclude each other: every sharded replica works, none stands by');
  const loopsFile = values.loops;
  const selector = pick('loop-selector', 'KUBELOOP_LOOP_SELECTOR');
  const urlPolicy = readFunctionUrlPolicy(values, env);
  return {
    ...readServerSettings(values, env, { defaultPort: 8081, defaultBodyLimitBytes: 16 * 1024, minBodyLimitBytes: 1024, maxDrainDelaySeconds: 300, portVariables: ['KUBELOOP_ROUTER_PORT'] }),
    kubeconfig: values.kubeconfig ?? (env.KUBECONFIG || undefined),
    context: values.context,
    recordDir: values.record ?? (env.KUBELOOP_RECORD_DIR || undefined),
    shadowFixturesDir: values['shadow-fixtures'] ?? (env.KUBELOOP_SHADOW_FIXTURES_DIR || undefined),
    leaderElect,
    sharding,
    shardingServerSide: settingBoolean(pick('sharding-server-side', 'KUBELOOP_SHARDING_SERVER_SIDE'), true),
    leaseNamespace: values['lease-namespace'] ?? (env.KUBELOOP_NAMESPACE || env.POD_NAMESPACE || 'kubeloop-system'),
    leaseName: values['lease-name'] ?? (env.KUBELOOP_LEASE_NAME || 'kubeloop-router'),
    leaseDurationSeconds,
    identity: values.identity ?? (env.POD_NAME || undefined),
    qps: settingNumber(pick('qps', 'KUBELOOP_API_QPS'), 50, 0, 10_000),
    burst: settingInteger(pick('burst', 'KUBELOOP_API_BURST'), 100, 1, 100_000),
    loopsFile,
    loops: loopsFile ? readLoopsFile(loopsFile, urlPolicy) : undefined,
    loopSelector: selector ? parseLabelPairs(selector.value, selector.setting) : undefined,
    watchTimeoutSeconds: settingInteger(pick('watch-timeout-seconds'), 300, 1, 3600),
    maxObjectValues: settingInteger(pick('max-object-values', 'KUBELOOP_MAX_OBJECT_VALUES'), DEFAULT_MAX_OBJECT_VALUES, 1000, 100_000_000),
    requestCaps: {
      objectsPerEntry: settingInteger(pick('max-related-objects-per-entry', 'KUBELOOP_MAX_RELATED_OBJECTS_PER_ENTRY'), DEFAULT_REQUEST_CAPS.objectsPerEntry, 1, 1_000_000),
      objectsPerRequest: settingInteger(pick('max-related-objects-per-request', 'KUBELOOP_MAX_RELATED_OBJECTS_PER_REQUEST'), DEFAULT_REQUEST_CAPS.objectsPerRequest, 1, 1_000_000),
      relatedBytesPerRequest: settingInteger(pick('max-related-bytes-per-request', 'KUBELOOP_MAX_RELATED_BYTES_PER_REQUEST'), DEFAULT_REQUEST_CAPS.relatedBytesPerRequest, 1024, 1024 * 1024 * 1024),
    },
    maxRequestBytesInFlight: settingInteger(pick('max-request-bytes-in-flight', 'KUBELOOP_MAX_REQUEST_BYTES_IN_FLIGHT'), DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT, 64 * 1024, 16 * 1024 * 1024 * 1024),
    expectationsTimeoutSeconds: settingInteger(pick('expectations-timeout-seconds'), 300, 1, 3600),
    apiTimeoutSeconds: settingInteger(pick('api-timeout-seconds'), 30, 1, 3600),
    maxActionsPerReply: settingInteger(pick('max-actions-per-reply', 'KUBELOOP_MAX_ACTIONS_PER_REPLY'), DEFAULT_MAX_ACTIONS_PER_REPLY, 1, 100_000),
    maxReplyBytes: settingInteger(pick('max-reply-bytes', 'KUBELOOP_MAX_REPLY_BYTES'), DEFAULT_MAX_RESPONSE_BYTES, 1024, 1024 * 1024 * 1024),
    urlPolicy,
    connectServicesTo: connectServicesTo(pick('connect-services-to', 'KUBELOOP_CONNECT_SERVICES_TO')),
    deniedNetworks: readDeniedNetworks(values['deny-function-network'], env),
    deniedLoopbackPorts: readDeniedLoopbackPorts(values['deny-loopback-port']),
    minRequeueSeconds: settingNumber(pick('min-requeue-seconds', 'KUBELOOP_MIN_REQUEUE_SECONDS'), 1, 0.1, 3600),
    loopQps: settingNumber(pick('loop-qps', 'KUBELOOP_LOOP_API_QPS'), 0, 0, 10_000),
    loopBurst: settingInteger(pick('loop-burst', 'KUBELOOP_LOOP_API_BURST'), 100, 1, 100_000),
    maxCallsInFlight: settingInteger(pick('max-calls-in-flight', 'KUBELOOP_MAX_CALLS_IN_FLIGHT'), DEFAULT_MAX_CALLS_IN_FLIGHT, 0, 1_000_000),
    fairApiQps: settingNumber(pick('fair-api-qps', 'KUBELOOP_FAIR_API_QPS'), DEFAULT_FAIR_API_LIMIT.qps, 0, 100_000),
    fairApiBurst: settingInteger(pick('fair-api-burst', 'KUBELOOP_FAIR_API_BURST'), DEFAULT_FAIR_API_LIMIT.burst, 1, 1_000_000),
    tenantWeights: tenantWeights(pick('tenant-weights', 'KUBELOOP_TENANT_WEIGHTS')),
    tenantMetricsLabels: settingInteger(pick('tenant-metrics-labels', 'KUBELOOP_TENANT_METRICS_LABELS'), DEFAULT_LABELLED_TENANTS, 1, 10_000),
    accessReviewSeconds: settingInteger(pick('access-review-seconds', 'KUBELOOP_ACCESS_REVIEW_SECONDS'), 300, 10, 86_400),
    maxLoopsPerTenant: settingInteger(pick('max-loops-per-tenant', 'KUBELOOP_MAX_LOOPS_PER_TENANT'), DEFAULT_MAX_LOOPS_PER_TENANT, 0, 100_000),
    history: {
      perObject: settingInteger(pick('history-per-object', 'KUBELOOP_HISTORY_PER_OBJECT'), DEFAULT_HISTORY_LIMITS.perObject, 0, 1000),
      objects: settingInteger(pick('history-objects', 'KUBELOOP_HISTORY_OBJECTS'), DEFAULT_HISTORY_LIMITS.objects, 1, 1_000_000),
      objectsPerTenant: settingInteger(pick('history-objects-per-tenant', 'KUBELOOP_HISTORY_OBJECTS_PER_TENANT'), DEFAULT_HISTORY_LIMITS.objectsPerTenant, 1, 1_000_000),
    },
    ...historyFiles(pick('history-dir', 'KUBELOOP_HISTORY_DIR'), pick('history-file-max-bytes', 'KUBELOOP_HISTORY_FILE_MAX_BYTES'), pick('history-files', 'KUBELOOP_HISTORY_FILES'), pick('history-per-object', 'KUBELOOP_HISTORY_PER_OBJECT')),
    ...historyApi(pick('history-api-port', 'KUBELOOP_HISTORY_API_PORT'), pick('history-tls-cert-file', 'KUBELOOP_HISTORY_TLS_CERT_FILE'), pick('history-tls-key-file', 'KUBELOOP_HISTORY_TLS_KEY_FILE')),
  };
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
      maxBytes: settingInteger(maxBytes, DEFAULT_HISTORY_FILE_MAX_BYTES, 4096, 1 << 30),
      files: settingInteger(files, DEFAULT_HISTORY_FILES, 1, 100),
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
