// Section (0) of bench:router: the router + pod-name-label function (HTTP) against the controller-runtime
// baseline (bench/baseline-controller), on the same control plane, at the same client QPS and concurrency,
// for pods already there and pods created live, and beside both the Node floor (bench/node-floor-controller.ts),
// alone and with the function hop.
// Same measures for every side: a watch's timestamps, /proc.
import type { KubeClient } from '../lib/kube/kube-client.ts';
import type { Loop } from '../api/loop.ts';
import { LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { spawnBaselineController } from './baseline-controller.ts';
import { readProcess, type ProcessReading } from './process-figures.ts';
import { samplePerf, type NativeSplit } from './native-split.ts';
import { warmFunction } from './warm-function.ts';
import type { PeakMemory } from './router-bench-router.ts';
import { callsFunction, MiB, type LimitMode, type Side, type VersusRun, type Work } from './versus-report.ts';
import { createNamespace, createPods, createReplicaSet, deleteAllPods, type ChildCode, percentile, type Sightings, spawnNodeFloor, spawnRouter, until, watchPods } from './router-bench-kit.ts';
import type { FloorConfig } from './node-floor-controller.ts';
import { loadKubeConfig, type HttpsOptions } from '../lib/kube/kube-config.ts';

/**
 * Untimed requests to the function before each side that calls it (bench/warm-function.ts), so that the side a
 * round starts with meets a function as warm as the others do; BENCH_VS_GO_WARMUP=0 skips them.
 */
const WARMUP_REQUESTS = Number(process.env.BENCH_VS_GO_WARMUP ?? 1000);

export interface VersusSettings {
  code: ChildCode;
  /** The children of BENCH_BASELINE_TREE, for the side `baseline`. */
  baselineCode?: ChildCode;
  client: KubeClient;
  kubeconfigPath: string;
  functionUrl: string;
  functionPid: number;
  goBinary: string;
  concurrency: number;
  annotation: string;
  label: string;
}

/** What a controller reports once the work is done. */
interface ControllerCounts {
  /** Writes that hit a conflict. */
  conflicts: number;
  /** Function calls answered (kubeloop only; 0 for Go). */
  calls: number;
  requests: number;
  /** The router's mean function call, ms (kubeloop only). */
  functionCallMs?: number;
  /** What the router's peak RSS was made of (kubeloop only). */
  atPeak?: PeakMemory;
}

interface Controller {
  pid: number;
  counts(pods: number): Promise<ControllerCounts>;
  stop(): Promise<void>;
}

async function startController(s: VersusSettings, mode: LimitMode, side: Side, namespace: string): Promise<Controller> {
  if (side === 'go') {
    const go = spawnBaselineController(s.goBinary, { kubeconfigPath: s.kubeconfigPath, namespaces: [namespace], qps: mode.qps, burst: mode.burst, workers: s.concurrency });
    await go.ready;
    return { pid: go.pid, counts: async () => ({ conflicts: go.errors(), calls: 0, requests: 0 }), stop: () => go.stop() };
  }
  if (side === 'node-floor' || side === 'node-floor-hop') {
    const hop = side === 'node-floor-hop' ? { functionUrl: s.functionUrl } : {};
    const floor = await spawnNodeFloor(s.code, { ...(await floorCredentials(s.kubeconfigPath)), namespace, annotation: s.annotation, label: s.label, workers: s.concurrency, ...hop });
    return { pid: floor.pid, counts: async () => ({ conflicts: floor.errors(), calls: 0, requests: 0 }), stop: () => floor.stop() };
  }
  const loop: Loop = {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'ClusterLoop',
    metadata: { name: 'pod-name-label', generation: 1 },
    spec: {
      for: { apiVersion: 'v1', kind: 'Pod' },
      namespaces: [namespace],
      metadataOnly: true,
      // The router acts as the Loop's ServiceAccount (impersonation), as in production; createNamespace made it.
      serviceAccount: { namespace, name: LOOP_SERVICE_ACCOUNT },
      function: { url: s.functionUrl, timeoutSeconds: 5, maxConcurrency: s.concurrency, ...(side === 'unbatched' ? { batch: { enabled: false } } : side === 'window' ? { batch: { windowMs: 5 } } : {}) },
    },
  };
  if (side === 'baseline' && !s.baselineCode) throw new Error('the side baseline needs BENCH_BASELINE_TREE');
  const router = await spawnRouter(side === 'baseline' ? s.baselineCode! : s.code, { kubeconfigPath: s.kubeconfigPath, loops: [loop], invoke: 'http', rateLimit: { qps: mode.qps, burst: mode.burst }, ...(side === 'undici-writes' ? { http2Writes: false } : {}) });
  return {
    pid: router.pid,
    counts: async (pods) => {
      const { counters, atPeak } = await router.stats();
      const mean = (key: string) => `${(((counters[`${key} seconds`] ?? 0) / (counters[`${key} observed`] || 1)) * 1000).toFixed(1)} ms`;
      console.log(`    ${side}: a key's mean time queued ${mean('queued')}, in its reconcile ${mean('reconcile')}, of which the function call ${mean('function call')}; a PATCH's round trip ${mean('patch')}`);
      const perPod = (key: string) => (counters[key] === undefined ? 'n/a' : (counters[key] / pods).toFixed(2));
      console.log(`    ${side}: per pod ${perPod('informer events')} informer events, ${perPod('queue adds')} queue adds, ${perPod('reconciles')} reconciles, ${perPod('own-write skips')} own-write skips, ${perPod('patches')} PATCHes (${perPod('patches refused')} refused 422)`);
      const calls = Object.entries(counters).reduce((sum, [key, value]) => (key.startsWith('calls ') ? sum + value : sum), 0);
      const functionCallMs = ((counters['function call seconds'] ?? 0) / (counters['function call observed'] || 1)) * 1000;
      return { conflicts: counters['action patch/conflict'] ?? 0, calls: counters['calls 2xx'] ?? 0, requests: calls - (counters['batched calls'] ?? 0) + (counters.batches ?? 0), functionCallMs, atPeak };
    },
    stop: () => router.stop(),
  };
}

/** The bench's kubeconfig as the Node floor takes it: the server and its TLS material in PEM, read by the bench. */
async function floorCredentials(kubeconfigPath: string): Promise<Pick<FloorConfig, 'server' | 'ca' | 'cert' | 'key' | 'headers'>> {
  const credentials = await loadKubeConfig({ kubeconfig: kubeconfigPath });
  const options: HttpsOptions = {};
  await credentials.applyToHTTPSOptions(options);
  // A CA may come as a list of certificates: one PEM text of them all, as TLS takes it (String() would join with commas).
  const pem = (value: unknown): string | undefined => (value === undefined ? undefined : Array.isArray(value) ? value.map(String).join('\n') : String(value));
  return { server: credentials.getCurrentCluster()!.server, ca: pem(options.ca), cert: pem(options.cert), key: pem(options.key), ...(options.headers ? { headers: options.headers } : {}) };
}

export async function versusRun(s: VersusSettings, mode: LimitMode, side: Side, work: Work, pods: number, tag: string): Promise<VersusRun> {
  const namespace = `vs-${mode.name}-${side}-${work}-${pods}-${tag}`;
  await createNamespace(s.client, namespace);
  if (work === 'existing') await createPods(s.client, namespace, 0, pods, { [s.annotation]: 'true' });
  const seen = await watchPods(s.client, namespace, s.label);
  try {
    return await measure(s, mode, side, work, pods, namespace, seen);
  } finally {
    // An open watch would keep the bench's client (and the bench) from closing on an error.
    seen.stop();
  }
}

async function measure(s: VersusSettings, mode: LimitMode, side: Side, work: Work, pods: number, namespace: string, seen: Sightings): Promise<VersusRun> {
  // Right before the side starts: the function has sat idle while the pods were made and the last side ran.
  if (callsFunction(side) && WARMUP_REQUESTS > 0) {
    const [at, before] = [performance.now(), readProcess(s.functionPid)];
    await warmFunction(s.functionUrl, WARMUP_REQUESTS, s.concurrency);
    const after = readProcess(s.functionPid);
    // Its peak RSS before and after: how much of the function's peak over the section the bench's own warm-up sets.
    console.error(`  ${side}: the function warmed by ${WARMUP_REQUESTS} requests in ${((performance.now() - at) / 1000).toFixed(2)} s, its CPU ${((after.cpuMs - before.cpuMs) / 1000).toFixed(2)} s, its peak RSS ${(before.peakRss / MiB).toFixed(1)} -> ${(after.peakRss / MiB).toFixed(1)} MiB (untimed)`);
  }
  const fnBefore = readProcess(s.functionPid);
  let started = performance.now();
  const controller = await startController(s, mode, side, namespace);
  // From ready to all labelled: the work, without the start-up (its own line in the report).
  const sampling = samplePerf(controller.pid, namespace);
  let native: NativeSplit | undefined;
  let before: ProcessReading = { cpuMs: 0, rss: 0, peakRss: 0, rssFile: 0, switches: 0 };
  let after: ProcessReading;
  let fnAfter: ProcessReading;
  let idleRss = 0;
  let counts: ControllerCounts;
  try {
    if (work === 'live') {
      before = readProcess(controller.pid);
      idleRss = before.rss;
      started = performance.now();
      await createReplicaSet(s.client, namespace, pods, { [s.annotation]: 'true' });
    }
    await until(`${pods} pods of ${namespace} labelled by ${side}`, 900_000, async () => seen.labelled.size >= pods, 20);
    after = readProcess(controller.pid);
    fnAfter = readProcess(s.functionPid);
    native = await sampling?.stop();
    counts = await controller.counts(pods);
  } finally {
    await controller.stop();
  }
  const labelledAt = [...seen.labelled.values()];
  // The spawn and the first label on the clock of the router child's BENCH_START_TRACE lines.
  if (process.env.BENCH_START_TRACE === '1') console.error(`start-trace-bench ${side} spawn ${(performance.timeOrigin + started).toFixed(1)} first-label ${(performance.timeOrigin + Math.min(...labelledAt)).toFixed(1)}`);
  const latencies = [...seen.labelled].map(([name, at]) => at - (work === 'live' ? (seen.added.get(name) ?? at) : started));
  const run: VersusRun = {
    mode,
    side,
    work,
    pods,
    totalMs: Math.max(...labelledAt) - started,
    firstLabelMs: Math.min(...labelledAt) - started,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuMs: after.cpuMs - before.cpuMs,
    functionCpuMs: callsFunction(side) ? fnAfter.cpuMs - fnBefore.cpuMs : 0,
    peakRss: after.peakRss,
    idleRss,
    ...(work === 'live' ? { startCpuMs: before.cpuMs } : {}),
    conflicts: counts.conflicts,
    calls: counts.calls,
    requests: counts.requests,
    ...(counts.functionCallMs !== undefined ? { functionCallMs: counts.functionCallMs } : {}),
    ...(counts.atPeak ? { atPeak: counts.atPeak } : {}),
    ...(callsFunction(side) ? { functionPeakRss: fnAfter.peakRss } : {}),
    ...(native ? { native } : {}),
  };
  console.error(`  ${mode.name} ${side} ${work} ${pods}: all labelled in ${(run.totalMs / 1000).toFixed(2)} s, CPU ${((run.cpuMs + run.functionCpuMs) / 1000).toFixed(2)} s`);
  if (work === 'live') await s.client.request({ method: 'DELETE', path: `/apis/apps/v1/namespaces/${namespace}/replicasets/bench`, query: { propagationPolicy: 'Orphan' } });
  await deleteAllPods(s.client, namespace);
  return run;
}
