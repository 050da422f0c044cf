// npm run bench:tenants-scale, on a private local control plane: BENCH_TENANTS (10,100,1000) namespaces, each with
// a namespaced Loop (primary ConfigMap, owned Secret) and every tenth with an AdmissionHook, against one router
// and one gateway (`kubeloop router` / `kubeloop webhook` from source). Per size, growing in one run: router and
// gateway RSS and CPU at rest, the router's open watches, time until every new Loop is Ready, a quiet tenant's
// change latency alone and while BENCH_BUSY (10) tenants are busy, admission p99 through a hook against none, and
// a router restart's time to converge; then the cost per added tenant. The report is bench/tenants-scale-report.ts.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gatewayClientAuthArgs } from '../cli/cluster/webhook-client-auth.ts';
import type { Loop } from '../api/loop.ts';
import type { ReconcileRequest } from '../lib/contract/types.ts';
import { isApiError, type KubeClient } from '../lib/kube/kube-client.ts';
import { serveFunction } from '../lib/runtime/index.ts';
import { defineFunction, respond } from '../lib/sdk/index.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { createLoopServiceAccount, LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { spawnUntilUrl } from './autocannon-kit.ts';
import { startBenchPlane, type BenchPlane } from './bench-plane.ts';
import { machineLoad, parsePrometheusText, readProcess, total } from './process-figures.ts';
import { percentile, pool, until } from './router-bench-kit.ts';
import { formatScale, hooked, hooksAt, parseSizes, type AfterRestart, type ScaleRow } from './tenants-scale-report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SIZES = parseSizes(process.env.BENCH_TENANTS ?? '10,100,1000');
const BUSY = Number(process.env.BENCH_BUSY ?? 10);
const BUSY_OBJECTS = Number(process.env.BENCH_BUSY_OBJECTS ?? 100);
const PHASE_MS = Number(process.env.BENCH_PHASE_SECONDS ?? 10) * 1000;
const REST_MS = Number(process.env.BENCH_REST_SECONDS ?? 10) * 1000;
const ADMISSIONS = Number(process.env.BENCH_ADMISSIONS ?? 100);
// A second restart per size with these router flags (e.g. "--qps=500 --burst=1000"), measured right after the first.
const RESTART_ARGS = (process.env.BENCH_RESTART_ARGS ?? '').split(' ').filter(Boolean);
const CHANGED_AT = 'bench.kubeloop.dev/changed-at';
const GROUP = '/apis/kubeloop.dev/v1alpha1';
const tenant = (i: number) => `scale-${String(i).padStart(4, '0')}`;

/** What the function saw: the last call per tenant, and the quiet tenant's latencies. */
const calls = new Map<string, number>();
let quietSamples: number[] = [];

const copier = defineFunction({
  name: 'tenants-scale-copier',
  reconcile: (request: ReconcileRequest) => {
    const object = request.object as (ReconcileRequest['object'] & { data?: Record<string, string> }) | undefined;
    const namespace = object?.metadata?.namespace ?? '';
    calls.set(namespace, performance.now());
    const at = Number(object?.metadata?.annotations?.[CHANGED_AT]);
    if (at > 0 && request.trigger?.type === 'MODIFIED') quietSamples.push(Date.now() - at);
    if (!object?.metadata?.name) return respond([]);
    // The owned kind: a Secret holding a copy of the ConfigMap's data.
    const data = Object.fromEntries(Object.entries(object.data ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    return respond([{ op: 'apply', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${object.metadata.name}-copy` }, data } }]);
  },
});

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

async function spawnRouter(kubeconfigPath: string, extra: string[] = []): Promise<Spawned> {
  const { child, url } = await spawnUntilUrl(
    ['cli/main.ts', 'router', `--kubeconfig=${kubeconfigPath}`, '--port=0', '--host=127.0.0.1', '--allow-loopback-functions', '--log-level=info', ...extra],
    { cwd: ROOT, match: (line) => (line.includes('"router started"') ? (JSON.parse(line) as { ops: string }).ops : undefined) },
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

/** CPU ms per wall second of each process over `ms`, and its RSS at the end. */
async function atRest(pids: number[], ms: number): Promise<Array<{ rss: number; cpuMsPerS: number }>> {
  const before = pids.map((pid) => readProcess(pid));
  const started = performance.now();
  await new Promise((r) => setTimeout(r, ms));
  const seconds = (performance.now() - started) / 1000;
  return pids.map((pid, i) => {
    const after = readProcess(pid);
    return { rss: after.rss, cpuMsPerS: (after.cpuMs - before[i]!.cpuMs) / seconds };
  });
}

/** Until every one of the first `tenants` tenants had its function called after `since`. */
async function untilAllCalled(tenants: number, since: number): Promise<void> {
  await until(`every one of ${tenants} tenants reconciled`, 900_000, async () => {
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
  for (let i = 0; i < ADMISSIONS; i++) {
    for (const ns of i % 2 === 0 ? [hookedNs, plainNs] : [plainNs, hookedNs]) {
      const start = performance.now();
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, query: { dryRun: 'All' }, body: configMap(`probe-${i}`) });
      times[ns]!.push(performance.now() - start);
    }
  }
  return { hookedP99: percentile(times[hookedNs]!, 99), unhookedP99: percentile(times[plainNs]!, 99) };
}

/** The quiet tenant's latencies (change -> call) over one phase, with `busy` tenants churning or not. */
async function quietPhase(client: KubeClient, quietNs: string, busy: number[]): Promise<number[]> {
  quietSamples = [];
  const deadline = performance.now() + PHASE_MS;
  const churn = busy.map(async (i) => {
    const ns = tenant(i);
    await pool(0, BUSY_OBJECTS, 8, async (n) => {
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: configMap(`busy-${n}`, { busy: 'true' }) });
    });
    for (let round = 0; performance.now() < deadline; round++) {
      await pool(0, BUSY_OBJECTS, 8, async (n) => {
        await client.request({ method: 'PATCH', path: `/api/v1/namespaces/${ns}/configmaps/busy-${n}`, contentType: 'application/merge-patch+json', body: { data: { setting: String(round) } } });
      });
    }
  });
  for (let n = 0; performance.now() < deadline; n++) {
    await client.request({ method: 'PATCH', path: `/api/v1/namespaces/${quietNs}/configmaps/primary`, contentType: 'application/merge-patch+json', body: { metadata: { annotations: { [CHANGED_AT]: String(Date.now()) } } } });
    await new Promise((r) => setTimeout(r, 200));
  }
  await Promise.all(churn);
  await new Promise((r) => setTimeout(r, 2000));
  for (const i of busy) await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${tenant(i)}/configmaps`, query: { labelSelector: 'busy=true' } });
  return quietSamples;
}

async function main(): Promise<void> {
  const started = performance.now();
  const bench = await startBenchPlane(ROOT, ['loops.kubeloop.dev', 'clusterloops.kubeloop.dev', 'admissionhooks.kubeloop.dev', 'clusteradmissionhooks.kubeloop.dev']);
  const { plane, client } = bench;
  const served = await serveFunction(copier, { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'fn', level: 'warn', destination: process.stderr }) });
  let router: Spawned | undefined;
  try {
    const admit = await bench.spawn([join(ROOT, 'bench/admission-bench-server.ts'), 'function']);
    const gateway = await bench.spawn(
      ['cli/main.ts', 'webhook', '--dev', '--port=0', '--ops-port=0', '--host=127.0.0.1', `--kubeconfig=${plane.kubeconfigPath}`, '--namespace=bench-kubeloop', '--tenant-configurations=1', ...gatewayClientAuthArgs(plane.dir)],
      (line) => (line.includes('"webhook serving"') ? (JSON.parse(line) as { opsUrl: string }).opsUrl : undefined),
    );
    const watchesWithoutRouter = await openWatches(bench.kubectl);
    router = await spawnRouter(plane.kubeconfigPath);
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
      await new Promise((r) => setTimeout(r, 3000));
      const [routerRest, gatewayRest] = await atRest([router.pid, gateway.child.pid!], REST_MS);
      const watches = (await openWatches(bench.kubectl)) - watchesWithoutRouter;
      const { series, scrapeCpuMs } = await scrape(router);
      const admission = await admissionP99(client, tenant(0), tenant(1));
      const quietNs = tenant(size - 1);
      const busy = Array.from({ length: Math.min(BUSY, size - 1) }, (_, i) => i);
      const alone = await quietPhase(client, quietNs, []);
      const withBusy = await quietPhase(client, quietNs, busy);
      // Restart: the new router lists every Loop and its objects again; converged when every tenant called again.
      // Then (3 s later, as above) its open watches and RSS, so a restart with other flags compares alike.
      const restart = async (extra: string[]): Promise<AfterRestart> => {
        await stop(router!.child);
        const restartAt = performance.now();
        router = await spawnRouter(plane.kubeconfigPath, extra);
        await untilAllCalled(tenants, restartAt);
        const ms = performance.now() - restartAt;
        await new Promise((r) => setTimeout(r, 3000));
        const after = { ms, watches: (await openWatches(bench.kubectl)) - watchesWithoutRouter, rss: readProcess(router.pid).rss, scrape: await scrape(router) };
        console.error(`[bench] ${size} tenants: router restart ${extra.join(' ')} converged in ${(ms / 1000).toFixed(1)} s, ${after.watches} watches, RSS ${(after.rss / 1024 / 1024).toFixed(1)} MiB`);
        return after;
      };
      const configured = await restart([]);
      const withArgs = RESTART_ARGS.length > 0 ? await restart(RESTART_ARGS) : undefined;
      // The next size runs with the router as configured.
      if (withArgs !== undefined && size !== SIZES.at(-1)) await restart([]);
      rows.push({
        tenants: size,
        hooks: hooksAt(size),
        router: routerRest!,
        gateway: gatewayRest!,
        watches,
        series,
        scrapeCpuMs,
        readyMs,
        createMs,
        quiet: { aloneP99: percentile(alone, 99), busyP99: percentile(withBusy, 99), samples: alone.length + withBusy.length },
        admission,
        restartConvergeMs: configured.ms,
        restartScrape: configured.scrape,
        ...(withArgs === undefined ? {} : { restartWithArgs: { args: RESTART_ARGS.join(' '), configured, withArgs } }),
      });
    }
    for (const line of formatScale(rows, machineLoad())) console.log(line);
    console.log(`\nbench:tenants-scale took ${((performance.now() - started) / 1000).toFixed(0)} s; router and gateway run from source through tsx (its loader is in both RSS figures, not in the per-tenant costs)`);
  } finally {
    if (router) await stop(router.child);
    await served.close();
    await bench.close();
  }
}

await main();
