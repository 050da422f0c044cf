// npm run bench:throttle-sampler: the router's Throttled sampler (throttle-monitor.ts) over BENCH_LOOPS (1,000) Loops at
// rest, each on a real FairScheduler flow and TenantBudget limiter, as the router wires them; CPU per pass and per Loop.
// BENCH_BASELINE_TREE=<checkout> runs that tree's sampler in the same process, rounds alternating.
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { ROOT } from './router-bench-kit.ts';

const LOOPS = Number(process.env.BENCH_LOOPS ?? 1000);
// Passes a round: 60 are 10 minutes of a router's life at the 10 s interval.
const PASSES = Number(process.env.BENCH_PASSES ?? 60);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const trees = { 'this tree': ROOT, ...(process.env.BENCH_BASELINE_TREE ? { baseline: process.env.BENCH_BASELINE_TREE } : {}) };

type Scheduler = typeof import('../router/base/fair-scheduler.ts');
type Budget = typeof import('../router/base/tenant-budget.ts');
type Monitor = typeof import('../router/loops/throttle-monitor.ts');

/** One tree's sampler over its Loops; returns one pass. Each tree's own wiring, as its loop-controller.ts reads a Loop. */
async function samplerOf(root: string): Promise<() => void> {
  const load = async <T>(path: string) => (await import(pathToFileURL(join(root, path)).href)) as T;
  const { FairScheduler } = await load<Scheduler>('router/base/fair-scheduler.ts');
  const { TenantBudget } = await load<Budget>('router/base/tenant-budget.ts');
  const { ThrottleMonitor } = await load<Monitor>('router/loops/throttle-monitor.ts');
  const clock = { now: 0 };
  const now = () => clock.now;
  const scheduler = new FairScheduler({ capacity: 64, weightOf: () => 1, now });
  const budget = new TenantBudget({ limit: { qps: 200, burst: 400 }, weightOf: () => 1, now });
  const loops = Array.from({ length: LOOPS }, (_, i) => {
    const namespace = `team-${i}`;
    const id = `${namespace}/loop`;
    const slots = scheduler.register({ tenant: namespace, id, start: () => false, wantsMore: () => false });
    const api = budget.forLoop(namespace, id);
    return { name: id, config: { id, namespace } as never, throttledAtStart: undefined, callWaitMs: () => slots.throttledMs(), apiWaitMs: () => api.throttledMs(), api };
  });
  // A tree from before the sampler's sources: a list built each pass, the call waits from the scheduler's flowShares().
  const before = typeof (scheduler as { flowShares?: unknown }).flowShares === 'function';
  const options = before
    ? { scheduler, apiQps: 200, loops: () => loops.map((l) => ({ name: l.name, config: l.config, apiThrottledMs: l.api.throttledMs() })) }
    : { maxCallsInFlight: 64, apiQps: 200, loops: () => loops.values() };
  const monitor = new ThrottleMonitor({ ...options, weightOf: () => 1, report: () => {}, now } as never);
  return () => {
    clock.now += 10_000;
    monitor.tick();
  };
}

console.log(`Throttled sampler: ${LOOPS} Loops at rest, ${PASSES} passes a round, ${ROUNDS} rounds, load ${loadavg()[0]!.toFixed(1)}`);
const samplers = Object.fromEntries(await Promise.all(Object.entries(trees).map(async ([name, root]) => [name, await samplerOf(root)] as const)));
const figures = await alternatingRounds(samplers, ROUNDS, async (pass) => {
  // CPU time, not wall time: on a loaded machine the process is descheduled between passes.
  const start = process.cpuUsage();
  for (let i = 0; i < PASSES; i++) pass();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PASSES;
});
for (const [name, us] of Object.entries(figures)) {
  const perPass = mean(us);
  // Six passes a minute: the sampler's share of a router's CPU at rest.
  console.log(`${name}: ${(perPass / 1000).toFixed(3)} ms a pass (rounds ${us.map((u) => (u / 1000).toFixed(2)).join(', ')}), ${((perPass * 1000) / LOOPS).toFixed(0)} ns per Loop, ${(perPass / 10_000).toFixed(3)} ms/s of CPU at rest`);
}
if (figures.baseline) console.log(`this tree / baseline: ${(mean(figures['this tree']!) / mean(figures.baseline)).toFixed(2)}`);
console.log(`load at the end ${loadavg()[0]!.toFixed(1)}`);
