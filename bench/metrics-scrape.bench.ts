// npx tsx bench/metrics-scrape.bench.ts: one /metrics scrape of the router's registry at BENCH_LOOPS (1,000) Loops,
// rendered by prom-client's registry.metrics() and by renderMetrics (lib/observability/metrics-text.ts), rounds
// alternating in one process: CPU ms per scrape and the ratio.
import { loadavg } from 'node:os';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { renderMetrics } from '../lib/observability/metrics-text.ts';
import { createRouterMetrics } from '../router/index.ts';

const LOOPS = Number(process.env.BENCH_LOOPS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const SCRAPES = Number(process.env.BENCH_SCRAPES ?? 10);

// As at rest with LOOPS tenants: each Loop Ready and not throttled, its calls and own-write skips counted (the
// bounded `loop` label folds all but the first hundred into "other").
const metrics = createRouterMetrics();
for (let i = 0; i < LOOPS; i++) {
  const loop = `scale-${String(i).padStart(4, '0')}/copier`;
  for (const type of ['Ready', 'Throttled', 'StartThrottled']) metrics.setLoopCondition(loop, type, type === 'Ready');
  metrics.functionCalls.inc({ loop, code: '2xx' });
  metrics.ownWriteSkips.inc({ loop });
}
const registry = metrics.registry;
const samples = (await registry.metrics()).split('\n').filter((line) => line && !line.startsWith('#')).length;

const renderers = { 'prom-client': () => registry.metrics(), renderMetrics: () => renderMetrics(registry) };
const figures = await alternatingRounds(renderers, ROUNDS, async (render) => {
  const cpu = process.cpuUsage();
  for (let i = 0; i < SCRAPES; i++) await render();
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000 / SCRAPES;
});
const prom = mean(figures['prom-client']!);
const ours = mean(figures.renderMetrics!);
console.log(`metrics-scrape: ${LOOPS} Loops, ${samples} samples, ${ROUNDS} rounds of ${SCRAPES} scrapes alternating, load ${loadavg()[0]!.toFixed(1)}`);
console.log(`  prom-client registry.metrics()  ${prom.toFixed(2)} ms CPU per scrape`);
console.log(`  renderMetrics                   ${ours.toFixed(2)} ms CPU per scrape`);
console.log(`  ratio renderMetrics / prom-client: ${(ours / prom).toFixed(2)}x CPU per scrape`);
