// npx tsx bench/metrics-scrape.bench.ts: one /metrics scrape of the router's registry at BENCH_LOOPS (1,000) Loops,
// rendered by prom-client's registry.metrics() (the page as one string) and by metricsChunks (lib/observability/
// metrics-text.ts, each chunk handed on as it comes), rounds alternating in one process: CPU ms per scrape, what
// each scrape leaves in the old generation, and the ratios. Run it with the router image's node flags too.
import { loadavg } from 'node:os';
import { getHeapSpaceStatistics } from 'node:v8';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { metricsChunks } from '../lib/observability/metrics-text.ts';
import { createRouterMetrics } from '../router/index.ts';

const LOOPS = Number(process.env.BENCH_LOOPS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const SCRAPES = Number(process.env.BENCH_SCRAPES ?? 10);

// As at rest with LOOPS tenants after each Loop reconciled once: Ready and not throttled, its calls, own-write skips
// and reconcile timings counted (the bounded `loop` label folds all but the first hundred into "other"), its two
// per-namespace informers with their objects and events.
const metrics = createRouterMetrics();
const cached: Array<[string, number]> = [];
for (let i = 0; i < LOOPS; i++) {
  const namespace = `scale-${String(i).padStart(4, '0')}`;
  const loop = `${namespace}/copier`;
  for (const type of ['Ready', 'Throttled', 'StartThrottled']) metrics.setLoopCondition(loop, type, type === 'Ready');
  metrics.functionCalls.inc({ loop, code: '2xx' });
  metrics.ownWriteSkips.inc({ loop });
  metrics.reconcileTotal.inc({ controller: loop, result: 'success' });
  metrics.reconcileTime.observe({ controller: loop }, 0.004);
  metrics.queueWait.observe({ name: loop, controller: loop }, 0.001);
  metrics.workDuration.observe({ name: loop, controller: loop }, 0.004);
  metrics.functionLatency.observe({ loop }, 0.002, 'a3ce929d0e0e4736');
  metrics.reconcileDuration.observe({ loop, result: 'ok' }, 0.003, 'a3ce929d0e0e4736');
  for (const kind of ['configmaps', 'secrets']) {
    const resource = `v1/${kind} in ${namespace}`;
    metrics.informers.inc({ resource });
    metrics.watchedObjects.set({ resource }, 3);
    metrics.informerEvents.inc({ resource }, 3);
  }
  cached.push([namespace, 4096]);
}
metrics.watchCaches(() => cached);
const registry = metrics.registry;
const samples = (await registry.metrics()).split('\n').filter((line) => line && !line.startsWith('#')).length;

/** Bytes in the old generation (old, code and large-object spaces): a scrape's survivors of the scavenges during it. */
function oldGeneration(): number {
  let bytes = 0;
  for (const space of getHeapSpaceStatistics()) if (!space.space_name.startsWith('new')) bytes += space.space_used_size;
  return bytes;
}

// Each page or chunk is read through as a socket write encodes it, into no JavaScript object.
async function chunked(): Promise<number> {
  let bytes = 0;
  for await (const chunk of metricsChunks(registry)) bytes += Buffer.byteLength(chunk);
  return bytes;
}
const renderers = { 'prom-client': async () => Buffer.byteLength(await registry.metrics()), metricsChunks: chunked };
const leftPerScrape: Record<string, number[]> = { 'prom-client': [], metricsChunks: [] };
const names = new Map(Object.entries(renderers).map(([name, render]) => [render, name]));
const figures = await alternatingRounds(renderers, ROUNDS, async (render) => {
  const cpu = process.cpuUsage();
  for (let i = 0; i < SCRAPES; i++) {
    const before = oldGeneration();
    await render();
    const grown = oldGeneration() - before;
    // A mark-compact during the scrape shrinks the old generation: that scrape says nothing of what it leaves.
    if (grown >= 0) leftPerScrape[names.get(render)!]!.push(grown);
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000 / SCRAPES;
});
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
const prom = mean(figures['prom-client']!);
const ours = mean(figures.metricsChunks!);
const promLeft = median(leftPerScrape['prom-client']!) / 2 ** 20;
const oursLeft = median(leftPerScrape.metricsChunks!) / 2 ** 20;
console.log(`metrics-scrape: ${LOOPS} Loops, ${samples} samples, ${ROUNDS} rounds of ${SCRAPES} scrapes alternating, node ${process.execArgv.join(' ')}, load ${loadavg()[0]!.toFixed(1)}`);
console.log(`  prom-client registry.metrics()  ${prom.toFixed(2)} ms CPU per scrape, ${promLeft.toFixed(2)} MiB left in the old generation (median)`);
console.log(`  metricsChunks                   ${ours.toFixed(2)} ms CPU per scrape, ${oursLeft.toFixed(2)} MiB left in the old generation (median)`);
console.log(`  ratio metricsChunks / prom-client: ${(ours / prom).toFixed(2)}x CPU per scrape, ${(oursLeft / promLeft).toFixed(2)}x left in the old generation`);
