// npm run bench:related, on a private local control plane (cli/cluster, kwok nodes as bench:router):
// BENCH_DEPLOYMENTS (2000) Deployments, each naming one of BENCH_REFERENCED (200) ConfigMaps by annotation, and
// BENCH_CONFIGMAPS (1000) ConfigMaps in all (the rest named by none: a related informer caches every object of
// its kind and scope). Three routers, one after the other, each in its own process: the Loop without
// spec.related (baseline), with the ConfigMaps related as full objects, and metadata-only. For each: RSS and
// heap after a forced GC once every Deployment was reconciled, over the baseline per 1,000 related objects;
// then one ConfigMap is changed and the function calls that follow are counted (exactly the Deployments
// naming it, BENCH_DEPLOYMENTS / BENCH_REFERENCED; 0 for the baseline). The function is called in-process
// and answers no actions (pod-name-label: Deployments carry no pod annotation), so nothing else calls again.
import type { Loop, RelatedResource } from '../api/loop.ts';
import { startControlPlane } from '../cli/cluster/index.ts';
import { KubeClient } from '../lib/kube/index.ts';
import { LOOP_SERVICE_ACCOUNT } from '../test/support/loop-service-account.ts';
import { compileChildren, createNamespace, MiB, NODES, pool, settledStats, spawnRouter, until, type ChildCode } from './router-bench-kit.ts';
import type { RouterChildStats } from './router-bench-router.ts';

const DEPLOYMENTS = Number(process.env.BENCH_DEPLOYMENTS ?? 2000);
const REFERENCED = Number(process.env.BENCH_REFERENCED ?? 200);
const CONFIGMAPS = Math.max(REFERENCED, Number(process.env.BENCH_CONFIGMAPS ?? 1000));
const NAMESPACE = 'bench-related';
const ANNOTATION = 'kubeloop.dev/config-map';
/** The ConfigMap changed in each run; the Deployments i with i % REFERENCED === CHANGED name it. */
const CHANGED = 7;

type Variant = 'baseline' | 'related, full' | 'related, metadata-only';

function loop(variant: Variant): Loop {
  const related: RelatedResource[] =
    variant === 'baseline' ? [] : [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: ANNOTATION }, metadataOnly: variant === 'related, metadata-only' }];
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'ClusterLoop',
    metadata: { name: 'config-reloader', generation: 1 },
    spec: {
      for: { apiVersion: 'apps/v1', kind: 'Deployment' },
      namespaces: [NAMESPACE],
      ignoreStatusChanges: true,
      ...(related.length > 0 ? { related } : {}),
      serviceAccount: { namespace: NAMESPACE, name: LOOP_SERVICE_ACCOUNT },
      // Called in-process (the router child's invoker); the URL is never dialled.
      function: { url: 'http://127.0.0.1:1/', maxConcurrency: 16 },
    },
  };
}

/** A ConfigMap of about 2 KiB, as application settings are. */
function configMap(i: number, generation = 0): object {
  const lines = Array.from({ length: 40 }, (_, l) => `setting.${l}=value-${i}-${l}-${generation}`).join('\n');
  return { metadata: { name: `config-${i}`, labels: { app: 'bench' } }, data: { 'app.properties': lines, 'log-level': 'info' } };
}

function deployment(i: number): object {
  const labels = { app: `web-${i}` };
  return {
    metadata: { name: `web-${i}`, annotations: { [ANNOTATION]: `config-${i % REFERENCED}` } },
    spec: { replicas: 0, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.example/team/app:1.2.3' }] } } },
  };
}

interface Row {
  variant: Variant;
  stats: RouterChildStats;
  syncMs: number;
  callsAfterChange: number;
}

const calls = (s: RouterChildStats) => Object.entries(s.counters).reduce((n, [k, v]) => (k.startsWith('calls ') ? n + v : n), 0);

async function run(code: ChildCode, client: KubeClient, kubeconfigPath: string, variant: Variant, generation: number): Promise<Row> {
  const started = performance.now();
  const router = await spawnRouter(code, { kubeconfigPath, loops: [loop(variant)], invoke: 'in-process', functionName: 'pod-name-label' });
  let last: RouterChildStats | undefined;
  await until(`${variant}: ${DEPLOYMENTS} Deployments reconciled`, 600_000, async () => {
    last = await router.stats();
    return last.synced && last.cached === DEPLOYMENTS && last.pending === 0 && calls(last) >= DEPLOYMENTS;
  }).catch((error: Error) => {
    throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`);
  });
  const syncMs = performance.now() - started;
  const stats = await settledStats(router);

  const before = calls(await router.stats());
  await client.request({ method: 'PUT', path: `/api/v1/namespaces/${NAMESPACE}/configmaps/config-${CHANGED}`, body: configMap(CHANGED, generation) });
  const expected = variant === 'baseline' ? 0 : Math.ceil((DEPLOYMENTS - CHANGED) / REFERENCED);
  await until(`${variant}: ${expected} calls after the change`, 120_000, async () => calls(await router.stats()) - before >= expected);
  // Anything more would come within this: the queue is empty, and a stray call would already be queued.
  await new Promise((r) => setTimeout(r, 3000));
  await until(`${variant}: queue empty`, 60_000, async () => (await router.stats()).pending === 0);
  const callsAfterChange = calls(await router.stats()) - before;
  await router.stop();
  console.error(`  ${variant}: RSS ${(stats.rss / MiB).toFixed(1)} MiB, ${callsAfterChange} call(s) after changing config-${CHANGED}`);
  return { variant, stats, syncMs, callsAfterChange };
}

function print(rows: Row[]): void {
  const base = rows.find((r) => r.variant === 'baseline');
  if (!base) return;
  const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
  const per = (bytes: number) => ((bytes / MiB) * (1000 / CONFIGMAPS)).toFixed(2);
  console.log(`\nbench:related: ${DEPLOYMENTS} Deployments naming ${REFERENCED} ConfigMaps (${CONFIGMAPS} ConfigMaps of ~2 KiB cached), one Loop, router in its own process after a forced GC`);
  console.log('  variant                    RSS         heap used   RSS over base  MiB / 1,000 related  heap over base  heap MiB / 1,000  sync+reconcile  calls after 1 ConfigMap change');
  for (const r of rows) {
    const over = r.stats.rss - base.stats.rss;
    const heap = r.stats.heapUsed - base.stats.heapUsed;
    const isBase = r === base;
    console.log(
      `  ${r.variant.padEnd(24)}  ${mib(r.stats.rss).padStart(10)}  ${mib(r.stats.heapUsed).padStart(10)}  ${(isBase ? '' : mib(over)).padStart(13)}  ${(isBase ? '' : per(over)).padStart(19)}  ${(isBase ? '' : mib(heap)).padStart(14)}  ${(isBase ? '' : per(heap)).padStart(16)}  ${`${(r.syncMs / 1000).toFixed(1)} s`.padStart(14)}  ${String(r.callsAfterChange).padStart(6)} (expected ${isBase ? 0 : Math.ceil((DEPLOYMENTS - CHANGED) / REFERENCED)})`,
    );
  }
}

async function main(): Promise<void> {
  const [code, plane] = await Promise.all([compileChildren(), startControlPlane({ nodes: NODES, onProgress: (line) => process.stderr.write(`[control-plane] ${line}\n`) })]);
  const client = await KubeClient.fromKubeConfig(plane.kubeConfig(), { rateLimit: { qps: 0, burst: 0 } });
  try {
    await createNamespace(client, NAMESPACE);
    const t0 = performance.now();
    await pool(0, CONFIGMAPS, 32, (i) => client.request({ method: 'POST', path: `/api/v1/namespaces/${NAMESPACE}/configmaps`, body: configMap(i) }).then(() => undefined));
    await pool(0, DEPLOYMENTS, 32, (i) => client.request({ method: 'POST', path: `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`, body: deployment(i) }).then(() => undefined));
    // The controller-manager annotates each new Deployment once (revision): let it finish before counting calls.
    await until('the Deployment controller has seen every Deployment', 600_000, async () => {
      const list = await client.request<{ items: Array<{ metadata?: { annotations?: Record<string, string> } }> }>({ path: `/apis/apps/v1/namespaces/${NAMESPACE}/deployments` });
      return list.items.length === DEPLOYMENTS && list.items.every((d) => d.metadata?.annotations?.['deployment.kubernetes.io/revision']);
    }, 2000);
    console.error(`[bench] created ${CONFIGMAPS} ConfigMaps and ${DEPLOYMENTS} Deployments in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const rows: Row[] = [];
    const variants: Variant[] = ['baseline', 'related, full', 'related, metadata-only'];
    for (const [i, variant] of variants.entries()) rows.push(await run(code, client, plane.kubeconfigPath, variant, i + 1));
    print(rows);
  } finally {
    await client.close();
    await plane.stop();
    await code.dispose();
  }
}

await main();
