// npx tsx bench/router-metric-writes.bench.ts: the metric writes the router makes per reconcile (loop-runner.ts's bound
// children, reconcile-key.ts's and call-rounds.ts's labelled writes, apply-actions.ts's action count) through
// createRouterMetrics, Loops taking turns; BENCH_BASELINE_TREE=<checkout> runs that tree's metrics in the same process,
// rounds alternating. BENCH_LOOPS (3) Loops with a bound of BENCH_LABELLED (2), BENCH_OPS (200,000) reconciles a round.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { ROOT } from './router-bench-kit.ts';

const OPS = Number(process.env.BENCH_OPS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const LOOPS = Array.from({ length: Number(process.env.BENCH_LOOPS ?? 3) }, (_, i) => `loop-${i}`);
const LABELLED = Number(process.env.BENCH_LABELLED ?? 2);
const trees = { 'this tree': ROOT, ...(process.env.BENCH_BASELINE_TREE ? { baseline: process.env.BENCH_BASELINE_TREE } : {}) };

type Metrics = typeof import('../router/base/router-metrics.ts');
type Lib = typeof import('../lib/observability/metrics.ts');

/** One tree's reconcile writes, a run of `run` keys per Loop before the next Loop's (a Loop's queue drains in turns). */
async function writesOf(root: string, run: number): Promise<(i: number) => void> {
  const m = (await import(pathToFileURL(join(root, 'router/base/router-metrics.ts')).href)) as Metrics;
  const lib = (await import(pathToFileURL(join(root, 'lib/observability/metrics.ts')).href)) as Lib;
  const metrics = m.createRouterMetrics(lib.createMetricsRegistry({ defaultMetrics: false }), LABELLED);
  const bound = LOOPS.map((loop) => ({ loop, b: m.loopMetrics(metrics, loop) }));
  return (i) => {
    const { loop, b } = bound[Math.floor(i / run) % bound.length]!;
    const seconds = (i & 1023) * 1e-5;
    b.queueWait.observe(seconds);
    metrics.functionLatency.observe({ loop }, seconds, '4bf92f3577b34da6a3ce929d0e0e4736');
    metrics.functionCalls.inc({ loop, code: '2xx' });
    metrics.actions.inc({ loop, op: 'patch', result: 'ok' });
    metrics.reconcileDuration.observe({ loop, result: 'success' }, seconds, '4bf92f3577b34da6a3ce929d0e0e4736');
    b.workDuration.observe(seconds);
    b.reconcileTime.observe(seconds);
    b.results.success.inc();
  };
}

console.log(`router metric writes: ${OPS} reconciles a round, ${ROUNDS} rounds, ${LOOPS.length} Loops (${LABELLED} named), load ${loadavg()[0]!.toFixed(1)}`);
for (const run of [1, 100]) {
  const writes = Object.fromEntries(await Promise.all(Object.entries(trees).map(async ([name, root]) => [name, await writesOf(root, run)] as const)));
  const figures = await alternatingRounds(writes, ROUNDS, async (write) => {
    // CPU time, not wall time: on a loaded machine the process is descheduled between writes.
    const start = process.cpuUsage();
    for (let i = 0; i < OPS; i++) write(i);
    const used = process.cpuUsage(start);
    return ((used.user + used.system) * 1000) / OPS;
  });
  const line = Object.keys(trees).map((name) => `${name} ${mean(figures[name]!).toFixed(0)} ns`).join(', ');
  const ratio = figures.baseline ? `; this tree / baseline ${(mean(figures['this tree']!) / mean(figures.baseline)).toFixed(2)}` : '';
  console.log(`Loops in turn every ${run} reconcile(s): ${line} CPU per reconcile's writes${ratio}`);
}
console.log(`load at the end ${loadavg()[0]!.toFixed(1)}`);
