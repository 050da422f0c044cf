// npm run bench:tenants-scale, on a private local control plane: BENCH_TENANTS (10,100,1000) namespaces, each with
// a namespaced Loop (primary ConfigMap, owned Secret) and every tenth with an AdmissionHook, against one router
// and one gateway run as their images run them (BENCH_FROM_SOURCE=1: from source). Per size, growing in one run: router and
// gateway RSS and CPU at rest, the router's open watches, time until every new Loop is Ready, a quiet tenant's
// change latency alone and while BENCH_BUSY (10) tenants are busy, admission p99 through a hook against none, and
// a router restart's time to converge; then the cost per added tenant. The report is bench/tenants-scale-report.ts.
// The function (bench/tenants-scale-function.ts) and the busy load (bench/tenants-scale-churn.ts) run in processes of
// their own, so this one only writes and times the quiet changes; each is cut into segments (tenants-scale-decomposition.ts).
// At rest, controller-runtime over the same namespaces runs beside them as the same-run baseline (bench/baseline-controller).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gatewayClientAuthArgs } from '../cli/cluster/webhook-client-auth.ts';
import type { Loop } from '../api/loop.ts';
import { isApiError, serviceAccountUser, type KubeClient } from '../lib/kube/kube-client.ts';
import { readWatchEvents } from '../lib/kube/watch-stream.ts';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createLoopServiceAccount, LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { spawnUntilUrl, type BuiltNode } from './autocannon-kit.ts';
import { buildBaselineController, spawnBaselineController, type BaselineChild } from './baseline-controller.ts';
import { LOOP_PROBE_DIR } from './loop-probe-reader.ts';
import { buildProductionBundle, dockerfileTargets } from '../test/support/production-bundle.ts';
import { startBenchPlane, type BenchPlane } from './bench-plane.ts';
import { delta, machineLoad, parsePrometheusText, readProcess, total } from './process-figures.ts';
import { percentile, pool, until } from './router-bench-kit.ts';
import { CHANGED_AT, decompose, flowControl, formatDecomposition, routerSeen, summarize, type PhaseLoad, type QuietArrival, type QuietWrite } from './tenants-scale-decomposition.ts';
import { TENANT_LEVEL, withTenantFlowControl } from './tenants-scale-apf.ts';
import { formatBaselineRest, formatRest } from './tenants-scale-rest.ts';
import { readLoopStalls } from './loop-probe-reader.ts';
import { atRest, routerScrape, untilRouterQuiet, type Probed } from './tenants-scale-probes.ts';
import { formatScale, hooked, hooksAt, parseSizes, quietP99s, type AfterRestart, type QuietP99s, type ScaleRow } from './tenants-scale-report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SIZES = parseSizes(process.env.BENCH_TENANTS ?? '10,100,1000');
const BUSY = Number(process.env.BENCH_BUSY ?? 10);
const BUSY_OBJECTS = Number(process.env.BENCH_BUSY_OBJECTS ?? 100);
const PHASE_MS = Number(process.env.BENCH_PHASE_SECONDS ?? 20) * 1000;
// The quiet tenant's pause between one change answered and the next: with the 20 s phase about 150 changes, so a
// p99 is not the slowest one.
const QUIET_INTERVAL_MS = Number(process.env.BENCH_QUIET_INTERVAL_MS ?? 100);
// The alone and busy phases alternate this many times (alone, busy, alone, busy, ...): each p99 pools every round's
// changes, and the report shows each round's ratio, which moves between runs by more than the 1.5x goal's margin.
const QUIET_ROUNDS = Math.max(1, Number(process.env.BENCH_QUIET_ROUNDS ?? 1));
// A scrape of the router's /metrics every so many seconds during each phase, as a Prometheus would (0: none). It
// restarts the router's event-loop delay histogram, so that figure covers the phase since the last scrape.
const SCRAPE_MS = Number(process.env.BENCH_SCRAPE_SECONDS ?? 15) * 1000;
// Changes per second per busy tenant, on a fixed schedule; unset, the busy tenants write as fast as the API server
// answers (then its CPU, not the platform's, sets the quiet tenant's latency on a small machine).
const BUSY_RATE = Number(process.env.BENCH_BUSY_RATE ?? 0);
// Paced busy tenants each start a fraction of the period apart (teams write independently); BENCH_BUSY_IN_STEP=1 sends
// every tenant's change at the same instant, a burst of BENCH_BUSY changes per period.
const BUSY_IN_STEP = process.env.BENCH_BUSY_IN_STEP === '1';
// At rest the router's periodic work is sparse and bursty: the API server sends each watch a bookmark every one to two
// minutes (measured: 60.8 s after one watch opened; 120.5 s after another), at once for watches opened together, so
// a 30 s window read anything from none to 43 a second at 1,000 tenants. Two minutes average them; access reviews
// (each hour) and resyncs (each 10 minutes) want a longer window still.
const REST_MS = Number(process.env.BENCH_REST_SECONDS ?? 120) * 1000;
// Seconds between the router going quiet and the window. After a burst V8 shrinks the heap (a memory-reducing
// mark-compact ~100 s after it, often a second ~100 s later: 140-240 ms of the router's main thread each at 1,000
// tenants), which a window at once includes; and each informer's first watch (its WatchList) renews 300-600 s after it
// opened (--watch-timeout-seconds), the next ones 1,800-3,600 s after (--bookmarked-watch-timeout-seconds), which it
// misses. 180 leaves out the first compaction; 300 or more leaves out both and lets the first renewals in; 660 or more
// comes after them, when every watch is a long one.
const REST_AFTER_MS = Number(process.env.BENCH_REST_AFTER_SECONDS ?? 0) * 1000;
const ADMISSIONS = Number(process.env.BENCH_ADMISSIONS ?? 100);
// A second restart per size with these router flags (e.g. "--qps=500 --burst=1000"), measured right after the first.
const RESTART_ARGS = (process.env.BENCH_RESTART_ARGS ?? '').split(' ').filter(Boolean);
// Or a second restart per size onto the router of another checkout (with its node_modules), built as this tree's is:
// a before/after of a router change at this scale in one run, each router measured at rest after its restart.
const RESTART_TREE = process.env.BENCH_RESTART_TREE;
const QUIET_COMPARE_ARGS = (process.env.BENCH_QUIET_COMPARE_ARGS ?? '').split(' ').filter(Boolean);
// The quiet and busy phases again with every tenant's writes made as its ServiceAccount (impersonated, as the router
// writes for its Loop), so API Priority and Fairness sees each tenant apart, not all as the bench's admin (exempt).
const AS_TENANTS = process.env.BENCH_AS_TENANTS !== '0';
// Those two phases once more with a Priority and Fairness level of these concurrency shares for ServiceAccounts.
const APF_SHARES = AS_TENANTS && process.env.BENCH_APF_TENANT_SHARES ? Number(process.env.BENCH_APF_TENANT_SHARES) : undefined;
// The quiet changes cut into segments from the router's history lines (--history-dir, which the chart leaves off and
// which costs the router CPU per change): BENCH_DECOMPOSE=1 turns both on.
const DECOMPOSE = process.env.BENCH_DECOMPOSE === '1';
// The router and the gateway from source through tsx, as before 2026-11-30 (the loader in their RSS and CPU).
const FROM_SOURCE = process.env.BENCH_FROM_SOURCE === '1';
// BENCH_ROUTER_FLAGS="--flag ...": Node flags put before the router's own, built or from source (experiments: --trace-gc, V8's heap).
const ROUTER_FLAGS = (process.env.BENCH_ROUTER_FLAGS ?? '').split(' ').filter(Boolean);
// The baseline at rest: controller-runtime (bench/baseline-controller, --shape=tenants: For ConfigMaps, Owns Secrets,
// read-only) over the same namespaces with a cache each, as a Go operator limited to its tenants' namespaces runs,
// measured in the router's window; BENCH_GO_AT_REST=0 leaves it out. It starts after the router went quiet and before
// BENCH_REST_AFTER_SECONDS, so with 660 or more its watches renew in the window as the router's may (client-go's every
// 5-10 minutes), and stops after the window, before the quiet and busy phases.
const GO_AT_REST = process.env.BENCH_GO_AT_REST !== '0';
// And the quiet and busy phases (as admin) once more with controller-runtime writing the copies in the router's place
// (--write; the router stopped, then started again): the same-run baseline of the quiet tenant's ratio, from the
// quiet change written to its reconcile; BENCH_GO_QUIET=0 leaves it out.
const GO_QUIET = process.env.BENCH_GO_QUIET !== '0';
const GROUP = '/apis/kubeloop.dev/v1alpha1';
const tenant = (i: number) => `scale-${String(i).padStart(4, '0')}`;

/** Waits BENCH_REST_AFTER_SECONDS (nothing scraped or written) before a window at rest. */
async function restAfterQuiet(size: number): Promise<void> {
  if (REST_AFTER_MS === 0) return;
  console.error(`[bench] ${size} tenants: ${REST_AFTER_MS / 1000} s before the window at rest (BENCH_REST_AFTER_SECONDS)`);
  await new Promise((resolve) => setTimeout(resolve, REST_AFTER_MS));
}

/** A port nothing listens on now, for controller-runtime's /metrics. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface StartedBaseline {
  child: BaselineChild;
  probed: Probed;
  /** Spawn -> its caches synced (controller-runtime's "Starting workers"). */
  syncMs: number;
}

/**
 * controller-runtime over the first `size` tenants' namespaces, synced and past its first reconciles: read-only beside
 * the router, or (`write`) in its place, writing the copies and reporting each quiet change's reconcile.
 */
async function startBaseline(binary: string, kubeconfigPath: string, size: number, write = false): Promise<StartedBaseline> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const namespaces = Array.from({ length: size }, (_, i) => tenant(i));
  const child = spawnBaselineController(binary, { kubeconfigPath, namespaces, qps: 1000, burst: 2000, workers: 16, shape: 'tenants', metricsBindAddress: `127.0.0.1:${port}`, write, changedAtAnnotation: CHANGED_AT });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`controller-runtime over ${size} namespaces did not sync in 600 s`)), 600_000)));
  try {
    await Promise.race([child.ready, timeout]);
  } catch (error) {
    await child.stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const syncMs = performance.now() - spawnedAt;
  // Its first reconciles (each ConfigMap and its Secret read from the caches) end within a second of the sync; the
  // window starts past them, as the router's starts past its echoes.
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  console.error(`[bench] ${size} tenants: controller-runtime over the same namespaces${write ? ", in the router's place," : ''} synced ${(syncMs / 1000).toFixed(1)} s after spawn`);
  return { child, probed: { pid: child.pid, opsUrl: `http://127.0.0.1:${port}` }, syncMs };
}

/** The copier function's process: asked over IPC for its last call per namespace and the quiet changes' arrivals. */
let fn: ChildProcess | undefined;
function ask<T>(what: 'calls' | 'quiet'): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: Record<string, unknown>) => {
      if (!(what in message)) return;
      fn!.off('message', onMessage);
      resolve(message[what] as T);
    };
    fn!.on('message', onMessage);
    fn!.send(what);
  });
}

function loop(namespace: string, functionUrl: string): Loop {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'Loop',
    metadata: { name: 'copier', namespace },
    spec: {
      for: { apiVersion: 'v1', kind: 'ConfigMap' },
      owns: [{ apiVersion: 'v1', kind: 'Secret' }],
      selector: { matchLabels: { app: 'bench' } },
      serviceAccount: { name: LOOP_SERVICE_ACCOUNT } as Loop['spec']['serviceAccount'],
      function: { url: functionUrl },
    },
  };
}

const configMap = (name: string, extra: Record<string, string> = {}) => ({ metadata: { name, labels: { app: 'bench', team: 'bench', ...extra } }, data: { setting: 'x' } });

async function createTenant(client: KubeClient, i: number, functionUrl: string, admitUrl: string): Promise<void> {
  const ns = tenant(i);
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: ns } } });
  await createLoopServiceAccount(client, { namespace: ns });
  if (hooked(i)) {
    await client.request({
      method: 'POST',
      path: `${GROUP}/namespaces/${ns}/admissionhooks`,
      body: {
        apiVersion: 'kubeloop.dev/v1alpha1',
        kind: 'AdmissionHook',
        metadata: { name: 'require-label' },
        spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], function: { url: admitUrl }, serviceAccount: { name: LOOP_SERVICE_ACCOUNT } },
      },
    });
  }
  await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: configMap('primary') });
  await client.request({ method: 'POST', path: `${GROUP}/namespaces/${ns}/loops`, body: loop(ns, functionUrl) });
}

async function readyLoops(client: KubeClient): Promise<number> {
  const list = await client.request<{ items: Loop[] }>({ path: `${GROUP}/loops` });
  return list.items.filter((l) => l.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

/** WATCH requests the API server holds open, all clients together (its own metric). */
async function openWatches(kubectl: BenchPlane['kubectl']): Promise<number> {
  return total(parsePrometheusText((await kubectl('get', '--raw', '/metrics')).stdout), 'apiserver_longrunning_requests', { verb: 'WATCH' });
}

interface Spawned {
  child: ChildProcess;
  pid: number;
  /** The ops server (/metrics). */
  opsUrl: string;
}

/** How a platform process starts: from source (`cli/main.ts <command>` through tsx), or as its image's ENTRYPOINT in a production bundle. */
interface PlatformCommand {
  args: (command: 'router' | 'webhook') => string[];
  built?: (command: 'router' | 'webhook') => { node: BuiltNode; cwd: string };
}

/**
 * The production bundle built as the Dockerfile builds it (the router's startup snapshot too) into `dir`, and each
 * image target's ENTRYPOINT flags and ENV (the router's `--efficiency-mode` and NODE_OPTIONS), so the figures are
 * the images' and not tsx's.
 */
async function platformCommand(dir: string): Promise<PlatformCommand> {
  if (FROM_SOURCE) return { args: (command) => ['cli/main.ts', command] };
  // The probe is TypeScript, preloaded through tsx, which the images leave out.
  if (LOOP_PROBE_DIR) throw new Error('BENCH_LOOP_PROBE needs BENCH_FROM_SOURCE=1 here (the probe is loaded through tsx)');
  process.stderr.write('[bench] building the production bundle (router snapshot included)\n');
  await buildProductionBundle(dir);
  return bundleCommand(dir, ROOT);
}

/** BENCH_RESTART_TREE's bundle, built by that checkout's own production-bundle.ts, as platformCommand builds this tree's. */
async function restartTreeCommand(dir: string, root: string): Promise<PlatformCommand> {
  if (FROM_SOURCE) throw new Error('BENCH_RESTART_TREE compares production bundles: leave BENCH_FROM_SOURCE unset');
  process.stderr.write(`[bench] building ${root}'s production bundle (router snapshot included)\n`);
  const theirs = (await import(pathToFileURL(join(root, 'test/support/production-bundle.ts')).href)) as { buildProductionBundle: typeof buildProductionBundle };
  await theirs.buildProductionBundle(dir);
  return bundleCommand(dir, root);
}

/** The bundle in `dir` started as `root`'s Dockerfile targets start theirs. */
async function bundleCommand(dir: string, root: string): Promise<PlatformCommand> {
  const targets = await dockerfileTargets(root);
  const entry = (command: 'router' | 'webhook') => {
    const target = targets.find((t) => t.target === command);
    if (!target) throw new Error(`the Dockerfile has no ${command} target`);
    return target;
  };
  return {
    // The ENTRYPOINT ends with the command (router, webhook): node's flags and the snapshot, or cli/bin.js, before it.
    args: (command) => [entry(command).args.at(-1)!],
    built: (command) => ({
      node: { execArgv: entry(command).args.slice(0, -1), env: { ...entry(command).env, NODE_ENV: 'production', KUBELOOP_FROM_SOURCE: '' } },
      cwd: dir,
    }),
  };
}

async function spawnRouter(platform: PlatformCommand, kubeconfigPath: string, extra: string[] = []): Promise<Spawned> {
  const built = platform.built?.('router');
  const { child, url } = await spawnUntilUrl(
    [...platform.args('router'), `--kubeconfig=${kubeconfigPath}`, '--port=0', '--host=127.0.0.1', '--allow-loopback-functions', '--log-level=info', ...extra],
    { cwd: built?.cwd ?? ROOT, ...(built ? { built: built.node } : {}), nodeFlags: ROUTER_FLAGS, match: (line) => (line.includes('"router started"') ? (JSON.parse(line) as { ops: string }).ops : undefined) },
  );
  return { child, pid: child.pid!, opsUrl: url };
}

/** Samples the router's /metrics holds (what grows with every Loop's label values), and the router's CPU for one scrape. */
async function scrape(router: Spawned): Promise<{ series: number; scrapeCpuMs: number }> {
  const before = readProcess(router.pid).cpuMs;
  const text = await (await fetch(`${router.opsUrl}/metrics`)).text();
  const scrapeCpuMs = readProcess(router.pid).cpuMs - before;
  return { series: parsePrometheusText(text).length, scrapeCpuMs };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Until every one of the first `tenants` tenants had its function called after `since` (Date.now()). */
async function untilAllCalled(tenants: number, since: number): Promise<void> {
  await until(`every one of ${tenants} tenants reconciled`, 900_000, async () => {
    const calls = new Map(await ask<Array<[string, number]>>('calls'));
    let n = 0;
    for (let i = 0; i < tenants; i++) if ((calls.get(tenant(i)) ?? 0) > since) n++;
    return n === tenants;
  }, 100);
}

/** Until the newest hooked namespace denies an unlabelled ConfigMap: the gateway registered every hook. */
async function untilHooksInEffect(client: KubeClient, tenants: number): Promise<void> {
  const newest = tenant(Math.floor((tenants - 1) / 10) * 10);
  await until(`hook of ${newest} in effect`, 180_000, async () => {
    try {
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${newest}/configmaps`, query: { dryRun: 'All' }, body: { metadata: { name: 'probe' } } });
      return false;
    } catch (error) {
      return isApiError(error) && String(error).includes('"team" label');
    }
  }, 500);
}

async function admissionP99(client: KubeClient, hookedNs: string, plainNs: string): Promise<{ hookedP99: number; unhookedP99: number }> {
  const times: Record<string, number[]> = { [hookedNs]: [], [plainNs]: [] };
  let failed = 0;
  for (let i = 0; i < ADMISSIONS; i++) {
    for (const ns of i % 2 === 0 ? [hookedNs, plainNs] : [plainNs, hookedNs]) {
      const start = performance.now();
      try {
        await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, query: { dryRun: 'All' }, body: configMap(`probe-${i}`) });
        times[ns]!.push(performance.now() - start);
      } catch (error) {
        // The webhook timing out on a loaded machine (the API server's 500) leaves a sample out, and says so.
        if (!isApiError(error, 500)) throw error;
        failed += 1;
      }
    }
  }
  if (failed > 0) console.error(`[bench] admission: ${failed} of ${2 * ADMISSIONS} dry-run creates failed (webhook timeouts), left out`);
  return { hookedP99: percentile(times[hookedNs]!, 99), unhookedP99: percentile(times[plainNs]!, 99) };
}

/** One phase of the quiet tenant's changes, with `busy` tenants churning or not. */
interface QuietRun {
  writes: QuietWrite[];
  arrivals: QuietArrival[];
  /** Change written -> function called, ms, per change the function saw. */
  latencies: number[];
  load: PhaseLoad;
}

interface PhaseContext {
  client: KubeClient;
  kubeconfigPath: string;
  router: Spawned;
  /** controller-runtime in the router's place (the router stopped): its reconciles are the arrivals, its CPU the load's. */
  baseline?: BaselineChild;
  /** kube-apiserver and etcd. */
  apiPids: number[];
  kubectl: BenchPlane['kubectl'];
}

/** Date.now() per resourceVersion of the quiet tenant's ConfigMap, as an idle watcher in this process sees it. */
async function watchQuiet(client: KubeClient, quietNs: string, signal: AbortSignal): Promise<Map<string, number>> {
  const watched = new Map<string, number>();
  const current = await client.request<{ metadata: { resourceVersion: string } }>({ path: `/api/v1/namespaces/${quietNs}/configmaps/primary` });
  const body = await client.stream({ path: `/api/v1/namespaces/${quietNs}/configmaps`, signal, query: { watch: true, fieldSelector: 'metadata.name=primary', resourceVersion: current.metadata.resourceVersion } });
  void (async () => {
    for await (const event of readWatchEvents<{ metadata: { resourceVersion: string } }>(body)) watched.set(event.object.metadata.resourceVersion, Date.now());
  })().catch(() => {});
  return watched;
}

/**
 * The quiet tenant's changes over one phase, with `busy` tenants churning or not. The busy load runs in a process of
 * its own (bench/tenants-scale-churn.ts), so this one's event loop only writes and times the quiet changes.
 */
async function quietPhase({ client: admin, kubeconfigPath, router, apiPids, kubectl, baseline }: PhaseContext, quietNs: string, busy: number[], asTenants = false): Promise<QuietRun> {
  const client = asTenants ? admin.impersonating({ user: serviceAccountUser(quietNs, LOOP_SERVICE_ACCOUNT) }, { qps: 1000, burst: 1000 }) : admin;
  const apiMetrics = async () => parsePrometheusText((await kubectl('get', '--raw', '/metrics')).stdout);
  // Where a change arrives: the function's call (the router built the request at `now`), or a reconcile of the baseline.
  const takeArrivals = async (): Promise<QuietArrival[]> => (baseline ? baseline.takeMarked().map((m) => ({ ...m, builtAt: m.receivedAt })) : await ask<QuietArrival[]>('quiet'));
  const apfBefore = await apiMetrics();
  await takeArrivals();
  const routerBefore = baseline ? [] : await routerScrape(router); // the router's event-loop delay histogram restarts at every scrape
  const apiCpu = () => apiPids.reduce((sum, pid) => sum + readProcess(pid).cpuMs, 0);
  const controllerPid = baseline ? baseline.pid : router.pid;
  const cpuBefore = [readProcess(controllerPid).cpuMs, readProcess(fn!.pid!).cpuMs, apiCpu()];
  if (!baseline) await Promise.all([readLoopStalls(router.pid), readLoopStalls(fn!.pid!)]); // their counts start here
  const phaseStart = performance.now();
  const writes: QuietWrite[] = [];
  const abort = new AbortController();
  const watched = await watchQuiet(admin, quietNs, abort.signal);
  const churnEnv = { ...process.env, CHURN_RATE: String(BUSY_RATE), CHURN_IN_STEP: BUSY_IN_STEP ? '1' : '0', ...(asTenants ? { CHURN_AS_SERVICE_ACCOUNT: LOOP_SERVICE_ACCOUNT } : {}) };
  const churn = busy.length === 0 ? undefined : spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/tenants-scale-churn.ts'), kubeconfigPath, String(PHASE_MS), String(BUSY_OBJECTS), ...busy.map(tenant)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: churnEnv });
  let churnOut = '';
  // Its busy writes refused under load are counted in its output, printed below.
  churn?.stdout!.on('data', (chunk: Buffer) => (churnOut += chunk.toString()));
  const churned = churn ? new Promise((resolve) => churn.once('exit', resolve)) : Promise.resolve();
  const deadline = performance.now() + PHASE_MS;
  // As a Prometheus would, through the phase; the body is read, not parsed.
  const scraper = SCRAPE_MS > 0 && !baseline ? setInterval(() => void fetch(`${router.opsUrl}/metrics`).then((r) => r.arrayBuffer()).catch(() => {}), SCRAPE_MS) : undefined;
  for (let n = 0; performance.now() < deadline; n++) {
    const changedAt = Date.now();
    const written = await client.request<{ metadata: { resourceVersion: string } }>({ method: 'PATCH', path: `/api/v1/namespaces/${quietNs}/configmaps/primary`, contentType: 'application/merge-patch+json', body: { metadata: { annotations: { [CHANGED_AT]: String(changedAt) } } } });
    writes.push({ changedAt, answeredAt: Date.now(), resourceVersion: written.metadata.resourceVersion });
    await new Promise((r) => setTimeout(r, QUIET_INTERVAL_MS));
  }
  clearInterval(scraper);
  await churned;
  const seconds = (performance.now() - phaseStart) / 1000;
  const [routerStalls, functionStalls] = baseline ? [] : await Promise.all([readLoopStalls(router.pid), readLoopStalls(fn!.pid!)]);
  const routerAfter = baseline ? [] : await routerScrape(router);
  const load: PhaseLoad = {
    patchesPerS: churn ? churnResult(churnOut).patches / seconds : 0,
    routerCpuMsPerS: (readProcess(controllerPid).cpuMs - cpuBefore[0]!) / seconds,
    functionCpuMsPerS: (readProcess(fn!.pid!).cpuMs - cpuBefore[1]!) / seconds,
    apiCpuMsPerS: (apiCpu() - cpuBefore[2]!) / seconds,
    routerLagP99Ms: total(routerAfter, 'nodejs_eventloop_lag_p99_seconds') * 1000,
    routerLagMaxMs: total(routerAfter, 'nodejs_eventloop_lag_max_seconds') * 1000,
    apiTokenWaits: { count: delta(routerBefore, routerAfter, 'kubeloop_loop_api_wait_seconds_count'), seconds: delta(routerBefore, routerAfter, 'kubeloop_loop_api_wait_seconds_sum') },
    flowControl: flowControl(apfBefore, await apiMetrics()),
    ...(routerStalls && functionStalls ? { stalls: { router: routerStalls, function: functionStalls } } : {}),
  };
  await new Promise((r) => setTimeout(r, 2000));
  abort.abort();
  for (const w of writes) {
    const at = watched.get(w.resourceVersion);
    if (at !== undefined) w.watchedAt = at;
  }
  const arrivals = (await takeArrivals()).filter((a) => a.namespace === quietNs);
  return { writes, arrivals, load, latencies: decompose(writes, arrivals, new Map()).map((d) => d.total) };
}

/**
 * The busy tenants' ConfigMaps, created before their phases and the router left to settle, so a busy phase measures
 * changes to objects that exist (the load of a busy team), not the burst of their creates and copies.
 */
async function createBusyObjects(client: KubeClient, router: Spawned, busy: number[]): Promise<void> {
  const configMap = (name: string) => ({ metadata: { name, labels: { app: 'bench', team: 'bench', busy: 'true' } }, data: { setting: 'x' } });
  for (const i of busy) await pool(0, BUSY_OBJECTS, 8, async (n) => void (await client.request({ method: 'POST', path: `/api/v1/namespaces/${tenant(i)}/configmaps`, body: configMap(`busy-${n}`) })));
  await untilRouterQuiet(router, 3000);
}

const deleteBusyObjects = async (client: KubeClient, busy: number[]) => {
  for (const i of busy) await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${tenant(i)}/configmaps`, query: { labelSelector: 'busy=true' } });
};

/** The churn process's last line; a crashed one (nothing printed) made no patches. */
function churnResult(out: string): { patches: number; failed: number; late: number } {
  const result = out.trim() === '' ? { patches: 0, failed: Number.NaN, late: 0 } : (JSON.parse(out) as { patches: number; failed: number; late: number });
  if (result.failed !== 0) console.error(`[bench] busy tenants: ${result.failed} writes refused under load`);
  // The paced rate was not reached: the quiet tenant's figure then mixes in an API server at its ceiling.
  if (result.late !== 0) console.error(`[bench] busy tenants: ${result.late} paced changes skipped, 8 still in flight (BENCH_BUSY_RATE above what the API server answers)`);
  return result;
}

/** BENCH_QUIET_ROUNDS pairs of phases, alone then with `busy` neighbours, each pair in turn. */
async function alternatingPhases(ctx: PhaseContext, quietNs: string, busy: number[], asTenants = false): Promise<{ alone: QuietRun[]; busy: QuietRun[] }> {
  const runs = { alone: [] as QuietRun[], busy: [] as QuietRun[] };
  for (let round = 0; round < QUIET_ROUNDS; round++) {
    runs.alone.push(await quietPhase(ctx, quietNs, [], asTenants));
    runs.busy.push(await quietPhase(ctx, quietNs, busy, asTenants));
  }
  return runs;
}

/** Rounds' changes together for the decomposition; the phase's load is its first round's. */
const pooled = (runs: QuietRun[]): QuietRun => ({ writes: runs.flatMap((r) => r.writes), arrivals: runs.flatMap((r) => r.arrivals), latencies: runs.flatMap((r) => r.latencies), load: runs[0]!.load });
const writeMs = (run: QuietRun) => run.writes.map((w) => w.answeredAt - w.changedAt);
const p99s = (runs: { alone: QuietRun[]; busy: QuietRun[] }) =>
  quietP99s(runs.alone.map((r) => r.latencies), runs.busy.map((r) => r.latencies), { alone: runs.alone.map(writeMs), busy: runs.busy.map(writeMs) });

/** Runs `phases` with the APF level for ServiceAccounts in effect (the API server reports its seats), then removes it. */
async function withApfLevel<T>(ctx: PhaseContext, shares: number, phases: () => Promise<T>): Promise<T> {
  const remove = await withTenantFlowControl(ctx.client, shares);
  try {
    await until('the APF level in effect', 60_000, async () => parsePrometheusText((await ctx.kubectl('get', '--raw', '/metrics')).stdout).some((m) => m.name === 'apiserver_flowcontrol_nominal_limit_seats' && m.labels.priority_level === TENANT_LEVEL), 500);
    return await phases();
  } finally {
    await remove();
  }
}

/** Every history line the router has written to `dir` so far, oldest file first. */
async function historyText(dir: string): Promise<string> {
  const files = (await readdir(dir)).filter((f) => f.startsWith('history.jsonl')).sort().reverse();
  return (await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')))).join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  const bench = await startBenchPlane(ROOT, ['loops.kubeloop.dev', 'clusterloops.kubeloop.dev', 'admissionhooks.kubeloop.dev', 'clusteradmissionhooks.kubeloop.dev']);
  const { plane, client } = bench;
  const served = await spawnUntilUrl([join(ROOT, 'bench/tenants-scale-function.ts')], { ipc: true });
  fn = served.child;
  // BENCH_HISTORY_DIR keeps the router's history lines for a look afterwards; a temporary folder otherwise.
  const historyDir = process.env.BENCH_HISTORY_DIR ?? (await mkdtemp(join(tmpdir(), 'tenants-scale-history-')));
  const bundleDir = await mkdtemp(join(tmpdir(), 'tenants-scale-bundle-'));
  const treeBundleDir = RESTART_TREE ? await mkdtemp(join(tmpdir(), 'tenants-scale-tree-bundle-')) : undefined;
  const decompositions: string[] = [];
  let router: Spawned | undefined;
  try {
    const platform = await platformCommand(bundleDir);
    if (RESTART_TREE && RESTART_ARGS.length > 0) throw new Error('BENCH_RESTART_TREE and BENCH_RESTART_ARGS each make the second restart: set one');
    const treePlatform = RESTART_TREE ? await restartTreeCommand(treeBundleDir!, RESTART_TREE) : undefined;
    const secondRestart = RESTART_ARGS.length > 0 ? { label: RESTART_ARGS.join(' '), args: RESTART_ARGS, platform } : treePlatform ? { label: `the router of ${RESTART_TREE}`, args: [], platform: treePlatform } : undefined;
    const admit = await bench.spawn([join(ROOT, 'bench/admission-bench-server.ts'), 'function']);
    const gateway = await bench.spawn(
      [...platform.args('webhook'), '--dev', '--port=0', '--ops-port=0', '--host=127.0.0.1', `--kubeconfig=${plane.kubeconfigPath}`, '--namespace=bench-kubeloop', '--tenant-configurations=1', ...gatewayClientAuthArgs(plane.dir)],
      (line) => (line.includes('"webhook serving"') ? (JSON.parse(line) as { opsUrl: string }).opsUrl : undefined),
      platform.built?.('webhook'),
    );
    const watchesWithoutRouter = await openWatches(bench.kubectl);
    const goBinary = GO_AT_REST || GO_QUIET ? await buildBaselineController((line) => console.error(`[bench] ${line}`)) : undefined;
    const routerArgs = DECOMPOSE ? [`--history-dir=${historyDir}`] : [];
    router = await spawnRouter(platform, plane.kubeconfigPath, routerArgs);
    const rows: ScaleRow[] = [];
    let tenants = 0;
    for (const size of SIZES) {
      const t0 = performance.now();
      await pool(tenants, size, 32, (i) => createTenant(client, i, served.url, `${admit.url}/admit`));
      const createMs = performance.now() - t0;
      await until(`${size} Loops Ready`, 900_000, async () => (await readyLoops(client)) >= size, 250);
      const readyMs = performance.now() - t0;
      tenants = size;
      await untilAllCalled(tenants, 0);
      await untilHooksInEffect(client, tenants);
      console.error(`[bench] ${size} tenants: created in ${(createMs / 1000).toFixed(1)} s, all Ready after ${(readyMs / 1000).toFixed(1)} s`);
      const settleMs = await untilRouterQuiet(router);
      console.error(`[bench] ${size} tenants: the router quiet after ${(settleMs / 1000).toFixed(1)} s`);
      // The router's watches, counted before the baseline opens its own.
      const watches = (await openWatches(bench.kubectl)) - watchesWithoutRouter;
      const go = goBinary && GO_AT_REST ? await startBaseline(goBinary, plane.kubeconfigPath, size) : undefined;
      await restAfterQuiet(size);
      const [routerRest, gatewayRest, goRest] = await atRest([router, { pid: gateway.child.pid!, opsUrl: gateway.url }, ...(go ? [go.probed] : [])], REST_MS);
      console.error(`[bench] ${size} tenants, router ${formatRest(routerRest!.rest)}\n[bench] ${size} tenants, gateway ${formatRest(gatewayRest!.rest)}`);
      const baseline = go && goRest ? { rss: goRest.rss, rest: goRest.rest, syncMs: go.syncMs, differs: go.child.differs() } : undefined;
      if (go) await go.child.stop();
      if (baseline) console.error(`[bench] ${size} tenants, controller-runtime ${formatBaselineRest(baseline.rest)}, RSS ${(baseline.rss / 1024 / 1024).toFixed(1)} MiB`);
      const { series, scrapeCpuMs } = await scrape(router);
      const admission = await admissionP99(client, tenant(0), tenant(1));
      const quietNs = tenant(size - 1);
      const busy = Array.from({ length: Math.min(BUSY, size - 1) }, (_, i) => i);
      const apiPids = [plane.pids()['kube-apiserver'], plane.pids().etcd].filter((pid): pid is number => pid !== undefined);
      const phase = { client, kubeconfigPath: plane.kubeconfigPath, router, apiPids, kubectl: bench.kubectl };
      await createBusyObjects(client, router, busy);
      const asAdmin = await alternatingPhases(phase, quietNs, busy);
      const asTenants = AS_TENANTS ? await alternatingPhases(phase, quietNs, busy, true) : undefined;
      const [alone, withBusy] = [pooled(asAdmin.alone), pooled(asAdmin.busy)];
      const [tenantsAlone, tenantsBusy] = asTenants ? [pooled(asTenants.alone), pooled(asTenants.busy)] : [undefined, undefined];
      const apf = APF_SHARES === undefined ? undefined : await withApfLevel(phase, APF_SHARES, async () => ({ alone: await quietPhase(phase, quietNs, [], true), busy: await quietPhase(phase, quietNs, busy, true) }));
      const restartRouter = async (extra: string[]) => {
        await stop(router!.child);
        const at = Date.now();
        router = await spawnRouter(platform, plane.kubeconfigPath, [...routerArgs, ...extra]);
        await untilAllCalled(tenants, at);
      };
      const quietPhaseWith = async (extra: string[]) => {
        await restartRouter(extra);
        return quietPhase({ ...phase, router: router! }, quietNs, busy);
      };
      // The busy phase again on a router restarted with BENCH_QUIET_COMPARE_ARGS (e.g. "--function-connections=64"),
      // for a before/after of a router setting in one run; the restarts below start from the configured router.
      const compared = QUIET_COMPARE_ARGS.length > 0 ? await quietPhaseWith(QUIET_COMPARE_ARGS) : undefined;
      if (compared) await restartRouter([]);
      // The same phases with controller-runtime in the router's place (the router stopped, then started again).
      let baselineQuiet: QuietP99s | undefined;
      if (goBinary && GO_QUIET) {
        await stop(router.child);
        const go = await startBaseline(goBinary, plane.kubeconfigPath, size, true);
        try {
          baselineQuiet = p99s(await alternatingPhases({ ...phase, baseline: go.child }, quietNs, busy));
        } finally {
          await go.child.stop();
        }
        const at = Date.now();
        router = await spawnRouter(platform, plane.kubeconfigPath, routerArgs);
        await untilAllCalled(tenants, at);
      }
      await deleteBusyObjects(client, busy);
      if (DECOMPOSE) {
        const seen = routerSeen(await historyText(historyDir), `${quietNs}/copier`);
        decompositions.push(`${size} tenants, the quiet tenant's changes cut into segments${QUIET_ROUNDS > 1 ? ` (every round's changes; each phase's load line is its first round's)` : ''}:`);
        decompositions.push(formatDecomposition('alone', summarize(decompose(alone.writes, alone.arrivals, seen)), alone.load));
        decompositions.push(formatDecomposition(`${busy.length} busy`, summarize(decompose(withBusy.writes, withBusy.arrivals, seen)), withBusy.load));
        if (compared) decompositions.push(formatDecomposition(`${busy.length} busy, router with ${QUIET_COMPARE_ARGS.join(' ')}`, summarize(decompose(compared.writes, compared.arrivals, seen)), compared.load));
        if (tenantsAlone && tenantsBusy) {
          decompositions.push(formatDecomposition('alone, as its ServiceAccount', summarize(decompose(tenantsAlone.writes, tenantsAlone.arrivals, seen)), tenantsAlone.load));
          decompositions.push(formatDecomposition(`${busy.length} busy, every tenant as its ServiceAccount`, summarize(decompose(tenantsBusy.writes, tenantsBusy.arrivals, seen)), tenantsBusy.load));
        }
        if (apf) {
          decompositions.push(formatDecomposition(`alone, as its ServiceAccount, APF level of ${APF_SHARES} shares`, summarize(decompose(apf.alone.writes, apf.alone.arrivals, seen)), apf.alone.load));
          decompositions.push(formatDecomposition(`${busy.length} busy, every tenant as its ServiceAccount, APF level of ${APF_SHARES} shares`, summarize(decompose(apf.busy.writes, apf.busy.arrivals, seen)), apf.busy.load));
        }
        console.error(`[bench] ${decompositions.slice(-7).join('\n')}`);
      }
      // Restart: the new router lists every Loop and its objects again; converged when every tenant called again.
      // Then (3 s later, as above) its open watches and RSS, so a restart with other flags compares alike.
      const restart = async (extra: string[], label: string, onto = platform): Promise<AfterRestart> => {
        await stop(router!.child);
        const restartAt = Date.now();
        router = await spawnRouter(onto, plane.kubeconfigPath, [...routerArgs, ...extra]);
        await untilAllCalled(tenants, restartAt);
        const ms = Date.now() - restartAt;
        await new Promise((r) => setTimeout(r, 3000));
        const after: AfterRestart = { ms, watches: (await openWatches(bench.kubectl)) - watchesWithoutRouter, rss: readProcess(router.pid).rss, scrape: await scrape(router) };
        // Both restarts at rest alike, so a flag's or a tree's effect on the router's idle work shows per tenant (e.g. --cluster-wide-watch).
        if (secondRestart) {
          await untilRouterQuiet(router);
          await restAfterQuiet(size);
          after.rest = (await atRest([router], REST_MS))[0]!.rest;
          console.error(`[bench] ${size} tenants, restarted router ${label} ${formatRest(after.rest)}`);
        }
        console.error(`[bench] ${size} tenants: router restart ${label} converged in ${(ms / 1000).toFixed(1)} s, ${after.watches} watches, RSS ${(after.rss / 1024 / 1024).toFixed(1)} MiB`);
        return after;
      };
      const configured = await restart([], 'as configured');
      const restartWithArgs = secondRestart ? { args: secondRestart.label, configured, withArgs: await restart(secondRestart.args, secondRestart.label, secondRestart.platform) } : undefined;
      // The next size runs with the router as configured.
      if (restartWithArgs && size !== SIZES.at(-1)) await restart([], 'as configured');
      rows.push({
        tenants: size,
        hooks: hooksAt(size),
        router: { rss: routerRest!.rss, cpuMsPerS: routerRest!.cpuMsPerS },
        gateway: { rss: gatewayRest!.rss, cpuMsPerS: gatewayRest!.cpuMsPerS },
        routerRest: routerRest!.rest,
        settleMs,
        gatewayRest: gatewayRest!.rest,
        watches,
        series,
        scrapeCpuMs,
        readyMs,
        createMs,
        quiet: p99s(asAdmin),
        ...(asTenants ? { quietAsTenants: p99s(asTenants) } : {}),
        ...(apf ? { quietApf: { ...quietP99s([apf.alone.latencies], [apf.busy.latencies]), shares: APF_SHARES! } } : {}),
        admission,
        restartConvergeMs: configured.ms,
        restartScrape: configured.scrape,
        ...(restartWithArgs ? { restartWithArgs } : {}),
        ...(baseline ? { baseline } : {}),
        ...(baselineQuiet ? { baselineQuiet } : {}),
      });
    }
    for (const line of formatScale(rows, machineLoad())) console.log(line);
    console.log(`  quiet tenant: one change, ${QUIET_INTERVAL_MS} ms pause, the next, over ${PHASE_MS / 1000} s phases${QUIET_ROUNDS > 1 ? `, alone and busy alternating ${QUIET_ROUNDS} times (BENCH_QUIET_ROUNDS)` : ''} (each p99 from the count of changes shown); the router's /metrics scraped ${SCRAPE_MS > 0 ? `every ${SCRAPE_MS / 1000} s during them` : 'not during them'}`);
    console.log(`  busy tenants: ${BUSY}, ${BUSY_OBJECTS} ConfigMaps each, ${BUSY_RATE > 0 ? `${BUSY_RATE} changes/s each on a fixed schedule, ${BUSY_IN_STEP ? 'all at the same instant (BENCH_BUSY_IN_STEP=1)' : 'spread over the period'}` : 'each writing as fast as the API server answers 8 at a time (BENCH_BUSY_RATE unset)'}`);
    if (decompositions.length > 0) console.log(['', ...decompositions].join('\n'));
    console.log(`\nbench:tenants-scale took ${((performance.now() - started) / 1000).toFixed(0)} s; ${FROM_SOURCE ? 'router and gateway run from source through tsx (its loader is in both RSS figures, not in the per-tenant costs)' : "router and gateway run as their images run them (the production bundle, the router from its snapshot, each target's ENTRYPOINT flags and ENV)"}${DECOMPOSE ? '; the router writes history files (BENCH_DECOMPOSE=1)' : ''}`);
  } finally {
    if (router) await stop(router.child);
    await stop(served.child);
    if (!process.env.BENCH_HISTORY_DIR) await rm(historyDir, { recursive: true, force: true });
    await rm(bundleDir, { recursive: true, force: true });
    if (treeBundleDir) await rm(treeBundleDir, { recursive: true, force: true });
    await bench.close();
  }
}

await main();
