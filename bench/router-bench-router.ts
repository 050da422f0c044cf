// Child process of bench/router.bench.ts: runs startRouter with the inline Loops it is given, calling the
// function over HTTP or in-process, and answers the parent's IPC questions (sync state, queue, RSS after GC).
// Run with --expose-gc so the RSS read after a forced collection is the router's steady state.
import { getHeapSpaceStatistics, startupSnapshot } from 'node:v8';
import { loadFunction } from '../functions/registry.ts';
import { validateReconcileResponse } from '../lib/contract/validate.ts';
import { loadKubeConfig } from '../lib/kube/kube-config.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { startTracing } from '../lib/observability/tracing.ts';
import { type FunctionInvoker, type Router, startRouter, DEFAULT_FAIR_API_LIMIT, readRouterConfig } from '../router/index.ts';
import { applyHeapGrowingPercent } from '../lib/server/heap-growing.ts';
import type { Loop } from '../api/loop.ts';
import { DEFAULT_FUNCTION_URL_POLICY } from '../lib/config/function-url-policy.ts';
import { startTrace } from './start-trace.ts';
import { startHeapSampling } from './heap-sampling.ts';

export interface RouterChildConfig {
  kubeconfigPath: string;
  loops: Loop[];
  /** 'http': the router's own undici invoker; 'in-process': the registered function called directly. */
  invoke: 'http' | 'in-process';
  /** Registered function name, for 'in-process'. */
  functionName?: string;
  /**
   * The client-side API limit, as controller-runtime's one client has it: the router's own requests and each
   * Loop's writes (as its ServiceAccount) are each held to it, and the tenants' shared budget is raised to it
   * when above its 500/1000. The router's defaults when omitted (its own 500/1000; Loops only under the shared budget).
   */
  rateLimit?: { qps: number; burst: number };
  /** The router's --http2-writes (its default when omitted). */
  http2Writes?: boolean;
  /** Tracing on (BENCH_TRACING): OTLP export to the parent's sink, this share of new traces sampled. */
  tracing?: { otlpEndpoint: string; samplingRatio: number };
}

export interface RouterChildStats {
  synced: boolean;
  /** Objects in the Loops' primary caches. */
  cached: number;
  /** Queued + in flight + waiting for a retry, over all Loops. */
  pending: number;
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  cpuUserMicros: number;
  cpuSystemMicros: number;
  /** Counter totals from the router's metrics: "calls 2xx", "action patch/ok", "reconcile conflict"... */
  counters: Record<string, number>;
  /** Where the memory was when RSS was highest (sampled every 100 ms): V8's heap spaces, external, RSS. */
  atPeak: PeakMemory;
}

export interface PeakMemory {
  rss: number;
  /** Size of each V8 heap space (new_space, old_space, code_space, large_object_space...) that holds anything. */
  spaces: Record<string, number>;
  external: number;
}

/** The in-process baseline: the same reconcile and the same reply validation as over HTTP, minus HTTP. */
async function inProcessInvoker(name: string): Promise<FunctionInvoker> {
  const definition = await loadFunction(name);
  return async (request) => {
    // Serialise and parse as the wire would, so the baseline pays for the copy like the function does.
    const response = definition.reconcile(JSON.parse(JSON.stringify(request)) as typeof request);
    const checked = validateReconcileResponse(JSON.parse(JSON.stringify(response)));
    if (!checked.ok) return { kind: 'failed', status: 200, reason: 'InvalidResponse', message: checked.errors.join('; ') };
    return { kind: 'ok', status: 200, response: checked.value };
  };
}

/** Where the memory was at the highest RSS sampled so far (samplePeak). */
let atPeak: PeakMemory = { rss: 0, spaces: {}, external: 0 };
function samplePeak(): void {
  // process.memoryUsage() walks V8's heap (1.7 % of the router's CPU at 10 Hz): only the RSS until a new peak.
  if (process.memoryUsage.rss() <= atPeak.rss) return;
  const memory = process.memoryUsage();
  const spaces: Record<string, number> = {};
  for (const space of getHeapSpaceStatistics()) if (space.space_size > 0) spaces[space.space_name] = space.space_size;
  atPeak = { rss: memory.rss, spaces, external: memory.external };
}
/** The histograms whose means say where a key's time goes, by the name the bench prints. */
const TIMED: ReadonlyArray<readonly [metric: string, key: string, verb?: string]> = [
  ['workqueue_queue_duration_seconds', 'queued'],
  ['kubeloop_router_function_call_seconds', 'function call'],
  ['kubeloop_router_reconcile_duration_seconds', 'reconcile'],
  ['rest_client_request_duration_seconds', 'patch', 'PATCH'],
];
/** Sums the counters the bench reports (calls by code, actions by op/result, reconciles by result). */
async function counters(router: Router): Promise<Record<string, number>> {
  const sums: Record<string, number> = {};
  const add = (key: string, value: number) => (sums[key] = (sums[key] ?? 0) + value);
  for (const metric of await router.metrics.registry.getMetricsAsJSON()) {
    for (const v of metric.values as Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>) {
      if (metric.name === 'kubeloop_router_function_calls_total') add(`calls ${v.labels.code}`, v.value);
      if (metric.name === 'kubeloop_router_own_write_skips_total') add('own-write skips', v.value);
      // Passes through the queue and reconciles (an own write's event settled at intake is neither).
      if (metric.name === 'workqueue_adds_total') add('queue adds', v.value);
      // Objects the informers took in, from lists and watches (a live pod's ADDED, binding, status writes, our patch).
      if (metric.name === 'kubeloop_router_informer_events_total') add('informer events', v.value);
      if (metric.name === 'controller_runtime_reconcile_total') add('reconciles', v.value);
      // PATCHes sent, and those the server refused as stale (a failed resourceVersion test answers 422).
      if (metric.name === 'rest_client_requests_total' && v.labels.method === 'PATCH') add('patches', v.value);
      if (metric.name === 'rest_client_requests_total' && v.labels.method === 'PATCH') add('patches refused', String(v.labels.code) === '422' ? v.value : 0);
      // Batched calls: HTTP requests = calls - batched calls + batches.
      if (metric.name === 'kubeloop_router_function_batch_size' && v.metricName?.endsWith('_count')) add('batches', v.value);
      if (metric.name === 'kubeloop_router_function_batch_size' && v.metricName?.endsWith('_sum')) add('batched calls', v.value);
      if (metric.name === 'kubeloop_router_actions_total') add(`action ${v.labels.op}/${v.labels.result}`, v.value);
      if (metric.name === 'kubeloop_router_reconcile_duration_seconds' && v.metricName?.endsWith('_count')) add(`reconcile ${v.labels.result}`, v.value);
      // Where a key's time goes (the bench prints the means): in the queue, in the function call, in the reconcile.
      for (const [name, key, verb] of TIMED) {
        if (metric.name !== name || (verb && v.labels.verb !== verb)) continue;
        if (v.metricName?.endsWith('_sum')) add(`${key} seconds`, v.value);
        if (v.metricName?.endsWith('_count')) add(`${key} observed`, v.value);
      }
    }
  }
  return sums;
}

async function stats(router: Router, collect: boolean): Promise<RouterChildStats> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (collect && gc) {
    // Twice: the first pass can leave objects whose finalisation frees more on the second.
    gc();
    gc();
  }
  const memory = process.memoryUsage();
  const cpu = process.cpuUsage();
  const runners = router.loops();
  return {
    synced: runners.every((r) => r.stats().synced),
    cached: runners.reduce((n, r) => n + r.stats().cachedPrimaries, 0),
    pending: runners.reduce((n, r) => n + r.stats().pendingKeys, 0),
    rss: memory.rss,
    heapUsed: memory.heapUsed,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    cpuUserMicros: cpu.user,
    cpuSystemMicros: cpu.system,
    counters: await counters(router),
    atPeak,
  };
}

/** Starts the router as the parent's config says and answers its questions until told to stop. */
async function main(): Promise<void> {
  const trace = startTrace();
  // From the start: with pods already there, most of their intake comes before the Loops are synced.
  const heap = startHeapSampling('router');
  const config = JSON.parse(process.env.KUBELOOP_BENCH_ROUTER ?? '{}') as RouterChildConfig;
  // As `kubeloop router` starts it: V8's heap growing factor (its flag's default or KUBELOOP_HEAP_GROWING_PERCENT;
  // a --heap-growing-percent among the child's node flags wins), then tracing, so the router's spans go to the SDK.
  applyHeapGrowingPercent(readRouterConfig([]).heapGrowingPercent);
  if (config.tracing) await startTracing({ otlpEndpoint: config.tracing.otlpEndpoint, otlpHeaders: {}, samplingRatio: config.tracing.samplingRatio }, 'kubeloop-router');
  // As `kubeloop router --kubeconfig` loads it (client-node only when the file needs it).
  const kubeConfig = await loadKubeConfig({ kubeconfig: config.kubeconfigPath });
  trace?.mark('kubeconfig read');
  const router = await startRouter({
    kubeConfig,
    loops: config.loops,
    ...(config.rateLimit ? { rateLimit: config.rateLimit, loopRateLimit: config.rateLimit } : {}),
    ...(config.http2Writes === undefined ? {} : { http2Writes: config.http2Writes }),
    // Above the tenants' shared budget (500 / 1000 by default) it is raised to the same, so it never caps the Loop first.
    ...(config.rateLimit && config.rateLimit.qps > DEFAULT_FAIR_API_LIMIT.qps ? { fairness: { apiRateLimit: config.rateLimit } } : {}),
    // The bench's function listens on 127.0.0.1: dev mode's URL policy.
    urlPolicy: { ...DEFAULT_FUNCTION_URL_POLICY, allowLoopback: true },
    // Warnings and errors only, to stderr (the parent shows them): a bench must not measure log volume.
    logger: createLogger({ name: 'router', level: 'warn', destination: process.stderr }),
    ...(config.invoke === 'in-process' ? { invoke: await inProcessInvoker(config.functionName ?? 'pod-name-label') } : {}),
  });
  trace?.mark('startRouter resolved');
  for (const loop of config.loops) await router.waitForLoop(loop.metadata.name ?? '', 120_000);
  trace?.mark('Loops synced');
  setInterval(samplePeak, 100).unref();
  process.on('message', (message: { type: 'stats'; gc?: boolean; id: number } | { type: 'stop' }) => {
    if (message.type === 'stats') void stats(router, message.gc === true).then((s) => process.send?.({ type: 'stats', id: message.id, stats: s }));
    else void router.stop().finally(async () => {
      await heap?.stop().then((file) => console.error(`router heap profile: ${file}`), (error: Error) => console.error(`router heap profile not written: ${error.message}`));
      process.exit(0);
    });
  });
  // The parent died without stopping us: do not outlive it.
  process.on('disconnect', () => process.exit(0));
  process.send?.({ type: 'ready' });
}

// bench/router-bench-kit.ts may start this from a V8 startup snapshot, as the router image is: main runs on restore.
if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(() => void main());
else void main();
