// Section (0) of bench:router: the router + pod-name-label function (HTTP) against the controller-runtime
// baseline (bench/baseline-controller), on the same control plane, at the same client QPS and concurrency,
// for pods already there and pods created live. Same measures for both sides: a watch's timestamps, /proc.
import type { KubeClient } from '../lib/kube/kube-client.ts';
import type { Loop } from '../api/loop.ts';
import { LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { spawnBaselineController } from './baseline-controller.ts';
import { readProcess, type ProcessReading } from './process-figures.ts';
import type { PeakMemory } from './router-bench-router.ts';
import { createNamespace, createPods, createReplicaSet, deleteAllPods, type ChildCode, MiB, percentile, type Sightings, spawnRouter, until, watchPods } from './router-bench-kit.ts';

/** `unbatched`: kubeloop with spec.function.batch.enabled false, beside the default (batched) in the same run. */
export type Side = 'kubeloop' | 'unbatched' | 'go';
export type Work = 'existing' | 'live';

export interface VersusSettings {
  code: ChildCode;
  client: KubeClient;
  kubeconfigPath: string;
  functionUrl: string;
  functionPid: number;
  goBinary: string;
  qps: number;
  concurrency: number;
  annotation: string;
  label: string;
}

export interface VersusRun {
  side: Side;
  work: Work;
  pods: number;
  /** From the pods' creation (live) or the controller's start (existing) to the last label. */
  totalMs: number;
  /** Controller start -> first label seen (existing), the start-up cost with a full backlog. */
  firstLabelMs: number;
  /** Per pod: first seen -> labelled (live), controller start -> labelled (existing). */
  p50: number;
  p99: number;
  /** Controller (+ function for kubeloop) CPU over the run, and the controller's and function's peak RSS. */
  cpuMs: number;
  functionCpuMs: number;
  peakRss: number;
  /** The controller's RSS when synced with an empty namespace (live runs only). */
  idleRss: number;
  /** Writes that hit a conflict, and function calls (kubeloop). */
  conflicts: number;
  calls: number;
  /** HTTP requests to the function (a batch is one); kubeloop only. */
  requests: number;
  /** What the router's peak RSS was made of (kubeloop only). */
  atPeak?: PeakMemory;
}

/** What a controller reports once the work is done. */
interface ControllerCounts {
  /** Writes that hit a conflict. */
  conflicts: number;
  /** Function calls answered (kubeloop only; 0 for Go). */
  calls: number;
  requests: number;
  /** What the router's peak RSS was made of (kubeloop only). */
  atPeak?: PeakMemory;
}

interface Controller {
  pid: number;
  counts(): Promise<ControllerCounts>;
  stop(): Promise<void>;
}

async function startController(s: VersusSettings, side: Side, namespace: string): Promise<Controller> {
  if (side === 'go') {
    const go = spawnBaselineController(s.goBinary, { kubeconfigPath: s.kubeconfigPath, namespace, qps: s.qps, burst: s.qps * 2, workers: s.concurrency });
    await go.ready;
    return { pid: go.pid, counts: async () => ({ conflicts: go.errors(), calls: 0, requests: 0 }), stop: () => go.stop() };
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
      function: { url: s.functionUrl, timeoutSeconds: 5, maxConcurrency: s.concurrency, ...(side === 'unbatched' ? { batch: { enabled: false } } : {}) },
    },
  };
  const router = await spawnRouter(s.code, { kubeconfigPath: s.kubeconfigPath, loops: [loop], invoke: 'http', rateLimit: { qps: s.qps, burst: s.qps * 2 } });
  return {
    pid: router.pid,
    counts: async () => {
      const { counters, atPeak } = await router.stats();
      const calls = Object.entries(counters).reduce((sum, [key, value]) => (key.startsWith('calls ') ? sum + value : sum), 0);
      return { conflicts: counters['action patch/conflict'] ?? 0, calls: counters['calls 2xx'] ?? 0, requests: calls - (counters['batched calls'] ?? 0) + (counters.batches ?? 0), atPeak };
    },
    stop: () => router.stop(),
  };
}

export async function versusRun(s: VersusSettings, side: Side, work: Work, pods: number, tag: string): Promise<VersusRun> {
  const namespace = `vs-${side}-${work}-${pods}-${tag}`;
  await createNamespace(s.client, namespace);
  if (work === 'existing') await createPods(s.client, namespace, 0, pods, { [s.annotation]: 'true' });
  const seen = await watchPods(s.client, namespace, s.label);
  try {
    return await measure(s, side, work, pods, namespace, seen);
  } finally {
    // An open watch would keep the bench's client (and the bench) from closing on an error.
    seen.stop();
  }
}

async function measure(s: VersusSettings, side: Side, work: Work, pods: number, namespace: string, seen: Sightings): Promise<VersusRun> {
  const fnBefore = readProcess(s.functionPid);
  let started = performance.now();
  const controller = await startController(s, side, namespace);
  let before: ProcessReading = { cpuMs: 0, rss: 0, peakRss: 0, switches: 0 };
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
    counts = await controller.counts();
  } finally {
    await controller.stop();
  }
  const labelledAt = [...seen.labelled.values()];
  const latencies = [...seen.labelled].map(([name, at]) => at - (work === 'live' ? (seen.added.get(name) ?? at) : started));
  const run: VersusRun = {
    side,
    work,
    pods,
    totalMs: Math.max(...labelledAt) - started,
    firstLabelMs: Math.min(...labelledAt) - started,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuMs: after.cpuMs - before.cpuMs,
    functionCpuMs: side === 'go' ? 0 : fnAfter.cpuMs - fnBefore.cpuMs,
    peakRss: after.peakRss,
    idleRss,
    conflicts: counts.conflicts,
    calls: counts.calls,
    requests: counts.requests,
    ...(counts.atPeak ? { atPeak: counts.atPeak } : {}),
  };
  console.error(`  ${side} ${work} ${pods}: all labelled in ${(run.totalMs / 1000).toFixed(2)} s, CPU ${((run.cpuMs + run.functionCpuMs) / 1000).toFixed(2)} s`);
  if (work === 'live') await s.client.request({ method: 'DELETE', path: `/apis/apps/v1/namespaces/${namespace}/replicasets/bench`, query: { propagationPolicy: 'Orphan' } });
  await deleteAllPods(s.client, namespace);
  return run;
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
const mean = (runs: VersusRun[], pick: (r: VersusRun) => number) => runs.reduce((sum, r) => sum + pick(r), 0) / runs.length;

export function printVersus(runs: VersusRun[], s: Pick<VersusSettings, 'qps' | 'concurrency'>): void {
  console.log(`\n(0) kubeloop (router + pod-name-label over HTTP) vs controller-runtime, client QPS ${s.qps} (burst ${s.qps * 2}), ${s.concurrency} calls/workers`);
  console.log('  side      work      pods  all labelled  first label  p50 ms  p99 ms  pods/s  CPU s/1k pods (fn)  conflicts/pod  calls/pod  reqs/pod  peak RSS    idle RSS');
  for (const r of runs) {
    // Milliseconds per pod are seconds per 1,000 pods.
    const cpuPer1k = (r.cpuMs + r.functionCpuMs) / r.pods;
    console.log(
      `  ${r.side.padEnd(9)} ${r.work.padEnd(8)}  ${String(r.pods).padStart(4)}  ${sec(r.totalMs).padStart(12)}  ${sec(r.firstLabelMs).padStart(11)}  ${r.p50.toFixed(0).padStart(6)}  ${r.p99.toFixed(0).padStart(6)}  ${(r.pods / (r.totalMs / 1000)).toFixed(0).padStart(6)}  ${`${cpuPer1k.toFixed(2)} (${(r.functionCpuMs / r.pods).toFixed(2)})`.padStart(18)}  ${(r.conflicts / r.pods).toFixed(2).padStart(13)}  ${r.side === 'go' ? '         ' : (r.calls / r.pods).toFixed(2).padStart(9)}  ${r.side === 'go' ? '        ' : (r.requests / r.pods).toFixed(2).padStart(8)}  ${mib(r.peakRss).padStart(9)}  ${r.idleRss ? mib(r.idleRss).padStart(9) : ''}`,
    );
  }
  console.log('  kubeloop / Go (goals: throughput >= 1.0, CPU <= 1.5)');
  const keys = [...new Set(runs.map((r) => `${r.work} ${r.pods}`))];
  for (const key of keys) {
    const of = (side: Side) => runs.filter((r) => `${r.work} ${r.pods}` === key && r.side === side);
    const k = of('kubeloop');
    const g = of('go');
    if (k.length === 0 || g.length === 0) continue;
    const throughput = mean(g, (r) => r.totalMs) / mean(k, (r) => r.totalMs);
    const cpu = mean(k, (r) => r.cpuMs + r.functionCpuMs) / mean(g, (r) => r.cpuMs);
    const rss = mean(k, (r) => r.peakRss) / mean(g, (r) => r.peakRss);
    console.log(
      `    ${key.padEnd(14)} throughput ${throughput.toFixed(2)}x  CPU per pod ${cpu.toFixed(2)}x  p50 ${mean(k, (r) => r.p50).toFixed(0)} vs ${mean(g, (r) => r.p50).toFixed(0)} ms  p99 ${mean(k, (r) => r.p99).toFixed(0)} vs ${mean(g, (r) => r.p99).toFixed(0)} ms  peak RSS ${rss.toFixed(2)}x (router alone)`,
    );
  }
  printBatching(runs);
  const firstK = runs.filter((r) => r.side === 'kubeloop' && r.work === 'existing');
  const firstG = runs.filter((r) => r.side === 'go' && r.work === 'existing');
  if (firstK.length > 0 && firstG.length > 0) {
    console.log(`  start to first label with pods already there: kubeloop ${sec(mean(firstK, (r) => r.firstLabelMs))} vs Go ${sec(mean(firstG, (r) => r.firstLabelMs))} (goal <= 0.50 s)`);
  }
  for (const r of runs) {
    if (!r.atPeak) continue;
    const spaces = Object.entries(r.atPeak.spaces).filter(([, bytes]) => bytes >= MiB).map(([name, bytes]) => `${name.replace(/_space$/, '')} ${mib(bytes)}`);
    console.log(`  router at its peak RSS, ${r.work} ${r.pods}: RSS ${mib(r.atPeak.rss)} = V8 heap spaces (${spaces.join(', ')}), external ${mib(r.atPeak.external)}, and the rest (Node, code, stacks, malloc)`);
  }
  const idleK = runs.filter((r) => r.side === 'kubeloop' && r.idleRss > 0);
  const peak2k = runs.filter((r) => r.side === 'kubeloop' && r.pods >= 2000);
  console.log(
    `  router RSS: idle ${idleK.length ? mib(mean(idleK, (r) => r.idleRss)) : 'n/a'} (goal <= 80 MiB), peak with >= 2,000 pods ${peak2k.length ? mib(Math.max(...peak2k.map((r) => r.peakRss))) : 'n/a'} (goal <= 100 MiB)`,
  );
}

/** Batched (the default) against spec.function.batch.enabled false, same run: requests, CPU, latency. */
function printBatching(runs: VersusRun[]): void {
  const keys = [...new Set(runs.map((r) => `${r.work} ${r.pods}`))];
  const lines: string[] = [];
  for (const key of keys) {
    const of = (side: Side) => runs.filter((r) => `${r.work} ${r.pods}` === key && r.side === side);
    const b = of('kubeloop');
    const u = of('unbatched');
    if (b.length === 0 || u.length === 0) continue;
    const perPod = (rs: VersusRun[], pick: (r: VersusRun) => number) => mean(rs, (r) => pick(r) / r.pods);
    lines.push(
      `    ${key.padEnd(14)} HTTP requests/pod ${perPod(b, (r) => r.requests).toFixed(2)} vs ${perPod(u, (r) => r.requests).toFixed(2)}` +
        `  CPU s/1k pods router ${perPod(b, (r) => r.cpuMs).toFixed(2)} vs ${perPod(u, (r) => r.cpuMs).toFixed(2)}, function ${perPod(b, (r) => r.functionCpuMs).toFixed(2)} vs ${perPod(u, (r) => r.functionCpuMs).toFixed(2)}` +
        ` (total ${(mean(b, (r) => r.cpuMs + r.functionCpuMs) / mean(u, (r) => r.cpuMs + r.functionCpuMs)).toFixed(2)}x)` +
        `  all labelled ${sec(mean(b, (r) => r.totalMs))} vs ${sec(mean(u, (r) => r.totalMs))}  p50 ${mean(b, (r) => r.p50).toFixed(0)} vs ${mean(u, (r) => r.p50).toFixed(0)} ms  p99 ${mean(b, (r) => r.p99).toFixed(0)} vs ${mean(u, (r) => r.p99).toFixed(0)} ms`,
    );
  }
  if (lines.length === 0) return;
  console.log('  batched (default) vs unbatched (spec.function.batch.enabled: false), same run');
  for (const line of lines) console.log(line);
}
