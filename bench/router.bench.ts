// npm run bench:router, on a private local control plane (cli/cluster):
// (0) kubeloop against a controller-runtime controller doing the same (bench/router-vs-go.ts), at
//     BENCH_VS_GO_PODS (500,2000) pods, already there and created live, both clients capped at QPS 100 and
//     uncapped at QPS 1,000 (BENCH_VS_GO_MODES), kubeloop's variants beside it; BENCH_QUICK=1 runs only (0) at 200 pods.
//     The sides' order rotates by round; each side that calls the function warms it first, untimed (BENCH_VS_GO_WARMUP).
// (1) a ReplicaSet creates BENCH_PODS (500) annotated pods at once; the pod-name-label Loop labels them. Time
//     until all are labelled and per-pod latency (first seen ADDED -> label first seen, both by a watch),
//     with the router calling the function over HTTP (function in a child process) and, in the same run,
//     in-process; the ratio is HTTP over in-process. BENCH_TRACING=1 adds HTTP with tracing on (10 % sampling,
//     BENCH_TRACE_SAMPLING; OTLP to a local sink) after each HTTP run: the router CPU per call it adds.
// (2) router RSS (child process, after a forced GC) with BENCH_RSS_PODS (1000,10000) pods watched, full
//     objects vs metadata-only, against an idle router measured in the same run.
// The router and function children run as the images do (bench/router-bench-kit.ts compileChildren): bundled
// with the production settings, the router image's NODE_OPTIONS, warmed compile caches.
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import type { Loop } from '../api/loop.ts';
import { LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { roundOrder } from './alternating-rounds.ts';
import { buildBaselineController } from './baseline-controller.ts';
import { versusRun } from './router-vs-go.ts';
import { formatVersus, limitModes, workItems, type Side, type VersusRun } from './versus-report.ts';
import {
  childCodeMode,
  compileChildren,
  createNamespace,
  createPods,
  createReplicaSet,
  type ChildCode,
  deleteAllPods,
  MiB,
  NODES,
  percentile,
  settledStats,
  spawnFunction,
  spawnRouter,
  until,
  watchPods,
} from './router-bench-kit.ts';
import type { RouterChildConfig, RouterChildStats } from './router-bench-router.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const numbers = (list: string) =>
  list
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(Number)
    .sort((a, b) => a - b);
const PODS = Number(process.env.BENCH_PODS ?? (QUICK ? 0 : 500));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const RSS_PODS = numbers(process.env.BENCH_RSS_PODS ?? (QUICK ? '' : '1000,10000'));
const VS_GO_PODS = numbers(process.env.BENCH_VS_GO_PODS ?? (QUICK ? '200' : '500,2000'));
// Both sides of (0): the same client limit (QPS, burst twice that) and calls in flight / workers, in two modes:
// capped (BENCH_VS_GO_QPS, 100: controller-runtime's usual settings, where both sides wait on the limiter) and
// uncapped (BENCH_UNCAPPED_QPS, 1,000, the router's shared tenant budget raised to it: each side's own ceiling).
const VS_GO_MODES = limitModes(process.env.BENCH_VS_GO_MODES ?? 'capped,uncapped', Number(process.env.BENCH_VS_GO_QPS ?? 100), Number(process.env.BENCH_UNCAPPED_QPS ?? 1000));
// BENCH_VS_GO_WORK=existing (or live) runs one work item: a first-action judgement needs no live runs.
const VS_GO_WORK = workItems(process.env.BENCH_VS_GO_WORK ?? 'existing,live');
const VS_GO_CONCURRENCY = Number(process.env.BENCH_VS_GO_CONCURRENCY ?? 16);
// (0) also runs kubeloop with batched calls off (spec.function.batch.enabled: false), with the router's writes
// over undici (--http2-writes=false) and with a 5 ms gathering window for calls (spec.function.batch.windowMs: 5, opt-in);
// BENCH_BATCH_COMPARE=0, BENCH_WRITES_COMPARE=0 and BENCH_WINDOW_COMPARE=0 skip them. BENCH_BASELINE_TREE=<another
// checkout, with node_modules> adds that tree's router (and bench child) as the side `baseline`: before/after in one run.
// The side `node-floor` (bench/node-floor-controller.ts: the same work on node:http2 alone) is the least a Node
// controller pays, beside Go and kubeloop; BENCH_FLOOR_COMPARE=0 skips it. The side `node-floor-hop` is that floor asking
// the function for each pod's patch (one POST per pod): the function hop priced alone; BENCH_FLOOR_HOP_COMPARE=0 skips it.
// BENCH_START_TRACE=1: this tree's router child prints its start-up timeline (bench/start-trace.ts) beside each side's spawn and first label,
// then its CPU at every hundredth PATCH.
const BASELINE_TREE = process.env.BENCH_BASELINE_TREE;
const VARIANTS: Side[] = [
  ...(process.env.BENCH_BATCH_COMPARE !== '0' ? ['unbatched' as const] : []),
  ...(process.env.BENCH_WRITES_COMPARE !== '0' ? ['undici-writes' as const] : []),
  ...(process.env.BENCH_WINDOW_COMPARE !== '0' ? ['window' as const] : []),
  ...(BASELINE_TREE ? ['baseline' as const] : []),
  ...(process.env.BENCH_FLOOR_COMPARE !== '0' ? ['node-floor' as const] : []),
  ...(process.env.BENCH_FLOOR_COMPARE !== '0' && process.env.BENCH_FLOOR_HOP_COMPARE !== '0' ? ['node-floor-hop' as const] : []),
];
// The router's client-side API limit (QPS; burst twice that); the router's default when unset.
const ROUTER_QPS = process.env.BENCH_ROUTER_QPS ? Number(process.env.BENCH_ROUTER_QPS) : undefined;
const ROUTER_RATE_LIMIT = ROUTER_QPS === undefined ? {} : { rateLimit: { qps: ROUTER_QPS, burst: ROUTER_QPS * 2 } };
const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';
/** How the router calls the function; 'http traced': over HTTP with tracing on at 10 % sampling (BENCH_TRACING=1). */
type Mode = RouterChildConfig['invoke'] | 'http traced';
const TRACING = process.env.BENCH_TRACING === '1';
const TRACE_SAMPLING = Number(process.env.BENCH_TRACE_SAMPLING ?? 0.1);

function loop(name: string, namespace: string, url: string, metadataOnly: boolean): Loop {
  // As samples/loops/pod-name-label.yaml, limited to one namespace.
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'ClusterLoop',
    metadata: { name, generation: 1 },
    spec: {
      for: { apiVersion: 'v1', kind: 'Pod' },
      namespaces: [namespace],
      metadataOnly,
      serviceAccount: { namespace, name: LOOP_SERVICE_ACCOUNT },
      function: { url, timeoutSeconds: 5, maxConcurrency: 16 },
    },
  };
}

interface LabelRun {
  mode: Mode;
  round: number;
  totalMs: number;
  /** When the last pod was first seen, from the ReplicaSet's creation: the API server's own pace. */
  lastAddedMs: number;
  p50: number;
  p99: number;
  max: number;
  routerCpuMs: number;
  routerRss: number;
  /** p50 of first seen -> first seen Running (kwok), the pod's own churn the label patch races with. */
  runningP50: number;
  /** Mean watch events per pod before the label's (the pod's creation, binding and status writes). */
  changesBeforeLabel: number;
  counters: Record<string, number>;
}

async function labelRun(code: ChildCode, client: KubeClient, kubeconfigPath: string, functionUrl: string, mode: Mode, round: number, otlpEndpoint?: string): Promise<LabelRun> {
  const namespace = `bench-label-${mode.replace(' ', '-')}-${round}`;
  await createNamespace(client, namespace);
  const tracing = mode === 'http traced' && otlpEndpoint ? { tracing: { otlpEndpoint, samplingRatio: TRACE_SAMPLING } } : {};
  const invoke = mode === 'http traced' ? 'http' : mode;
  const router = await spawnRouter(code, { kubeconfigPath, loops: [loop('pod-name-label', namespace, functionUrl, true)], invoke, functionName: 'pod-name-label', ...ROUTER_RATE_LIMIT, ...tracing });
  const cpuBefore = await router.stats();
  const seen = await watchPods(client, namespace, LABEL);
  const started = performance.now();
  await createReplicaSet(client, namespace, PODS, { [ANNOTATION]: 'true' });
  await until(`${PODS} pods of ${namespace} labelled`, 600_000, async () => seen.labelled.size >= PODS, 20);
  const finished = performance.now();
  seen.stop();
  const after = await router.stats();
  await router.stop();
  const latencies = [...seen.labelled].map(([name, at]) => at - (seen.added.get(name) ?? at));
  const run: LabelRun = {
    mode,
    round,
    totalMs: finished - started,
    lastAddedMs: Math.max(...seen.added.values()) - started,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    routerCpuMs: (after.cpuUserMicros + after.cpuSystemMicros - cpuBefore.cpuUserMicros - cpuBefore.cpuSystemMicros) / 1000,
    routerRss: after.rss,
    runningP50: percentile([...seen.running].map(([name, at]) => at - (seen.added.get(name) ?? at)), 50),
    changesBeforeLabel: [...seen.changesBeforeLabel.values()].reduce((a, b) => a + b, 0) / PODS,
    counters: after.counters,
  };
  const counts = Object.entries(after.counters).map(([k, v]) => `${k}=${v}`).join(', ');
  console.error(`  ${mode} round ${round}: all ${PODS} labelled in ${(run.totalMs / 1000).toFixed(2)} s (p99 ${run.p99.toFixed(0)} ms); ${counts}`);
  // Clean up before the next run so it starts on a quiet API server.
  await client.request({ method: 'DELETE', path: `/apis/apps/v1/namespaces/${namespace}/replicasets/bench`, query: { propagationPolicy: 'Orphan' } });
  await deleteAllPods(client, namespace);
  return run;
}

interface RssRow {
  pods: number;
  metadataOnly: boolean;
  stats: RouterChildStats;
  syncMs: number;
}

async function rssReading(code: ChildCode, kubeconfigPath: string, functionUrl: string, namespace: string, pods: number, metadataOnly: boolean): Promise<RssRow> {
  const started = performance.now();
  const router = await spawnRouter(code, { kubeconfigPath, loops: [loop('rss', namespace, functionUrl, metadataOnly)], invoke: 'http' });
  // Synced and every initial reconcile done (no writes: the pods are not annotated).
  let last: RouterChildStats | undefined;
  await until(`router caching ${pods} pods with an empty queue`, 300_000, async () => {
    last = await router.stats();
    return last.synced && last.cached === pods && last.pending === 0;
  }).catch((error: Error) => {
    throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`);
  });
  const syncMs = performance.now() - started;
  const stats = await settledStats(router);
  await router.stop();
  console.error(`  ${pods} pods, ${metadataOnly ? 'metadata-only' : 'full objects'}: RSS ${(stats.rss / MiB).toFixed(1)} MiB`);
  return { pods, metadataOnly, stats, syncMs };
}

/** Accepts every OTLP export (what a collector does first), so only the router's side is measured. */
async function otlpSink(): Promise<{ url: string; close(): void }> {
  const server = createHttpServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

function printLabelRuns(runs: LabelRun[]): void {
  const limit = ROUTER_QPS === undefined ? 'default API limit' : `API limit QPS ${ROUTER_QPS}`;
  console.log(`\n(1) ${PODS} annotated pods from one ReplicaSet, pod-name-label Loop (metadata-only, maxConcurrency 16, router ${limit}), ${ROUNDS} round(s)`);
  console.log('  invoke       round  all labelled  last pod seen  p50 ms  p99 ms  max ms  Running p50  events/pod  calls/pod  router CPU  router RSS');
  for (const r of runs) {
    console.log(
      `  ${r.mode.padEnd(11)}  ${String(r.round).padStart(5)}  ${sec(r.totalMs).padStart(12)}  ${sec(r.lastAddedMs).padStart(13)}  ${r.p50.toFixed(0).padStart(6)}  ${r.p99.toFixed(0).padStart(6)}  ${r.max.toFixed(0).padStart(6)}  ${`${r.runningP50.toFixed(0)} ms`.padStart(11)}  ${r.changesBeforeLabel.toFixed(2).padStart(10)}  ${((r.counters['calls 2xx'] ?? 0) / PODS).toFixed(2).padStart(9)}  ${sec(r.routerCpuMs).padStart(10)}  ${mib(r.routerRss).padStart(10)}`,
    );
  }
  const mean = (mode: Mode, pick: (r: LabelRun) => number) => {
    const of = runs.filter((r) => r.mode === mode);
    return of.reduce((s, r) => s + pick(r), 0) / of.length;
  };
  const total = mean('http', (r) => r.totalMs) / mean('in-process', (r) => r.totalMs);
  const cpu = mean('http', (r) => r.routerCpuMs) / mean('in-process', (r) => r.routerCpuMs);
  console.log(`  HTTP / in-process: total time ${total.toFixed(3)} (target <= 1.10), p99 ${mean('http', (r) => r.p99).toFixed(0)} ms vs ${mean('in-process', (r) => r.p99).toFixed(0)} ms (target <= 1000 ms), router CPU ${cpu.toFixed(2)}`);
  if (runs.some((r) => r.mode === 'http traced')) {
    // Per call: the router's CPU over the run divided by its function calls (reconciles that skipped the call count as work too).
    const perCall = (mode: Mode) => (mean(mode, (r) => r.routerCpuMs) * 1000) / mean(mode, (r) => r.counters['calls 2xx'] ?? PODS);
    const off = perCall('http');
    const on = perCall('http traced');
    console.log(`  tracing at ${TRACE_SAMPLING * 100} % sampling: router CPU per call ${off.toFixed(0)} us off, ${on.toFixed(0)} us on (${(((on / off) - 1) * 100).toFixed(1)} %, goal <= 5 %), same run, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  }
}

function printRss(idle: RssRow[], rows: RssRow[]): void {
  console.log('\n(2) Router RSS after a forced GC (own process), pods not annotated (no writes)');
  // RSS is the target's unit but moves by several MiB between idle routers; heap growth is the steadier figure.
  console.log('  pods    cache           RSS         heap used   RSS over idle  MiB / 1,000 pods  heap over idle  heap MiB / 1,000  sync+reconcile');
  for (const r of [...idle, ...rows]) {
    const base = idle.find((i) => i.metadataOnly === r.metadataOnly) ?? idle[0]!;
    const over = r.stats.rss - base.stats.rss;
    const heapOver = r.stats.heapUsed - base.stats.heapUsed;
    const per = (bytes: number) => (r.pods === 0 ? '' : ((bytes / MiB) * (1000 / r.pods)).toFixed(2));
    console.log(
      `  ${String(r.pods).padStart(5)}  ${(r.metadataOnly ? 'metadata-only' : 'full objects').padEnd(13)}  ${mib(r.stats.rss).padStart(10)}  ${mib(r.stats.heapUsed).padStart(10)}  ${mib(over).padStart(13)}  ${per(over).padStart(16)}  ${mib(heapOver).padStart(14)}  ${per(heapOver).padStart(16)}  ${sec(r.syncMs).padStart(14)}`,
    );
  }
  for (const pods of RSS_PODS) {
    const meta = rows.find((r) => r.pods === pods && r.metadataOnly);
    const full = rows.find((r) => r.pods === pods && !r.metadataOnly);
    const idleMeta = idle.find((i) => i.metadataOnly) ?? idle[0]!;
    const idleFull = idle.find((i) => !i.metadataOnly) ?? idle[0]!;
    if (!meta || !full) continue;
    const ratio = (full.stats.rss - idleFull.stats.rss) / Math.max(1, meta.stats.rss - idleMeta.stats.rss);
    const heapRatio = (full.stats.heapUsed - idleFull.stats.heapUsed) / Math.max(1, meta.stats.heapUsed - idleMeta.stats.heapUsed);
    console.log(
      `  ${pods} pods: metadata-only ${(((meta.stats.rss - idleMeta.stats.rss) / MiB) * (1000 / pods)).toFixed(2)} MiB RSS per 1,000 pods (target <= 15); full objects grow ${ratio.toFixed(1)}x as much RSS, ${heapRatio.toFixed(1)}x as much heap`,
    );
  }
}

async function main(): Promise<void> {
  const benchStarted = performance.now();
  // Compile (and build the Go baseline, cached) while the control plane starts.
  const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const [code, baselineCode, goBinary, plane] = await Promise.all([
    compileChildren(),
    BASELINE_TREE ? compileChildren(childCodeMode(), BASELINE_TREE) : Promise.resolve(undefined),
    VS_GO_PODS.length > 0 ? buildBaselineController(progress) : Promise.resolve(''),
    startControlPlane({ nodes: NODES, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) }),
  ]);
  const kubeConfig: KubeConfig = plane.kubeConfig();
  // The bench's own client: well above the router's limits so it never is the bottleneck.
  const client = await KubeClient.fromKubeConfig(kubeConfig, { rateLimit: { qps: 0, burst: 0 } });
  const fn = await spawnFunction(code, 'pod-name-label');
  try {
    console.error(`[bench] children from ${childCodeMode()}; function pod-name-label at ${fn.url}; vs Go at ${VS_GO_PODS.join(', ')} pods, ${VS_GO_MODES.map((m) => `${m.name} (QPS ${m.qps})`).join(' and ')}; ${PODS} pods x ${ROUNDS} round(s), RSS at ${RSS_PODS.join(', ')} pods`);
    const versus: VersusRun[] = [];
    const settings = {
      code,
      ...(baselineCode ? { baselineCode } : {}),
      client,
      kubeconfigPath: plane.kubeconfigPath,
      functionUrl: fn.url,
      functionPid: fn.child.pid!,
      goBinary,
      concurrency: VS_GO_CONCURRENCY,
      annotation: ANNOTATION,
      label: LABEL,
    };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of VS_GO_MODES) {
        for (const pods of VS_GO_PODS) {
          for (const work of VS_GO_WORK) {
            // Rotate the sides so that over the rounds each takes each place alike (drift on a shared machine too).
            const sides = roundOrder<Side>(['kubeloop', ...VARIANTS, 'go'], round - 1 + VS_GO_PODS.indexOf(pods));
            for (const [position, side] of sides.entries()) versus.push({ ...(await versusRun(settings, mode, side, work, pods, String(round))), position });
          }
        }
      }
    }
    const runs: LabelRun[] = [];
    const sink = TRACING ? await otlpSink() : undefined;
    if (PODS > 0) {
      for (let round = 1; round <= ROUNDS; round++) {
        // Alternate which goes first so drift on a shared machine hits both alike.
        const order: Mode[] = round % 2 === 1 ? ['http', 'in-process'] : ['in-process', 'http'];
        // Tracing on against tracing off, right after it, in the same run (BENCH_TRACING=1).
        if (TRACING) order.splice(order.indexOf('http') + 1, 0, 'http traced');
        for (const mode of order) runs.push(await labelRun(code, client, plane.kubeconfigPath, fn.url, mode, round, sink?.url));
      }
    }
    const idle: RssRow[] = [];
    const rows: RssRow[] = [];
    if (RSS_PODS.length > 0) {
      const namespace = 'bench-rss';
      await createNamespace(client, namespace);
      for (const metadataOnly of [true, false]) idle.push(await rssReading(code, plane.kubeconfigPath, fn.url, namespace, 0, metadataOnly));
      let created = 0;
      for (const pods of RSS_PODS) {
        await createPods(client, namespace, created, pods);
        created = pods;
        for (const metadataOnly of [true, false]) rows.push(await rssReading(code, plane.kubeconfigPath, fn.url, namespace, pods, metadataOnly));
      }
    }
    if (versus.length > 0) for (const line of formatVersus(versus, VS_GO_CONCURRENCY)) console.log(line);
    if (runs.length > 0) printLabelRuns(runs);
    if (idle.length > 0) printRss(idle, rows);
    console.log(`\nbench:router took ${sec(performance.now() - benchStarted)} (2 cores shared by etcd, kube-apiserver, controllers, kwok, router and function)`);
  } finally {
    fn.child.kill();
    await client.close();
    await plane.stop();
    await code.dispose();
    await baselineCode?.dispose();
  }
}

await main();
