// npx tsx bench/lean-metrics.bench.ts: the router's per-reconcile metric writes with prom-client's Histogram and
// Counter and with LeanHistogram / LeanCounter, in one process, rounds alternating; prints ns per write and the
// ratio (lean / prom-client). BENCH_OPS (200,000) writes per round, BENCH_ROUNDS (6) rounds.
import { loadavg } from 'node:os';
import { Counter, Histogram, Registry } from 'prom-client';
import { alternatingRounds, mean } from './alternating-rounds.ts';
import { LeanCounter } from '../lib/observability/lean-counter.ts';
import { LeanHistogram } from '../lib/observability/lean-histogram.ts';
import { LATENCY_BUCKETS_SECONDS } from '../lib/observability/metrics.ts';
import { REST_CLIENT_BUCKETS, WORKQUEUE_BUCKETS } from '../router/index.ts';

const OPS = Number(process.env.BENCH_OPS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
/** Latencies from 50 µs to 2 s, as queue waits, reconciles and API requests take. */
const VALUES = Array.from({ length: 1024 }, (_, i) => 0.00005 * 1.01 ** (i % 1000));

type Write = (i: number) => void;
interface Kit {
  histogram: typeof Histogram;
  counter: typeof Counter;
}

/** The router's writes (router-metrics.ts, loop-runner.ts #process, reconcile-key.ts, kube-client's observer). */
const cases: Record<string, (kit: Kit) => Write> = {
  'bound histogram observe (queueWait/workDuration)': ({ histogram }) => {
    const child = new histogram({ name: 'q', help: 'q', labelNames: ['name', 'controller'], buckets: WORKQUEUE_BUCKETS, registers: [new Registry()] }).labels({ name: 'podset', controller: 'podset' });
    return (i) => child.observe(VALUES[i & 1023]!);
  },
  'labelled observe (rest_client_request_duration)': ({ histogram }) => {
    const h = new histogram({ name: 'r', help: 'r', labelNames: ['verb', 'host'], buckets: REST_CLIENT_BUCKETS, registers: [new Registry()] });
    return (i) => h.observe({ verb: 'PATCH', host: 'api' }, VALUES[i & 1023]!);
  },
  'exemplar observe (reconcile_duration)': ({ histogram }) => {
    const h = new histogram({ name: 'e', help: 'e', labelNames: ['loop', 'result'], buckets: [...LATENCY_BUCKETS_SECONDS], registers: [], enableExemplars: true });
    // What exemplarLatencyHistogram's observe called: prom-client's argument object; LeanHistogram's observeLabelled.
    if (h instanceof LeanHistogram) return (i) => h.observeLabelled({ loop: 'podset', result: 'success' }, VALUES[i & 1023]!, { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
    const exemplarLabels = () => ({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' }) as Record<string, string>;
    return (i) => h.observe({ labels: { loop: 'podset', result: 'success' }, value: VALUES[i & 1023]!, exemplarLabels: exemplarLabels() });
  },
  'bound counter inc (adds/results)': ({ counter }) => {
    const child = new counter({ name: 'c', help: 'c', labelNames: ['name', 'controller'], registers: [new Registry()] }).labels({ name: 'podset', controller: 'podset' });
    return () => child.inc();
  },
};

const kits: Record<'prom-client' | 'lean', Kit> = {
  'prom-client': { histogram: Histogram, counter: Counter },
  lean: { histogram: LeanHistogram as typeof Histogram, counter: LeanCounter as typeof Counter },
};

console.log(`lean-metrics: ${OPS} writes a round, ${ROUNDS} rounds, load ${loadavg()[0]!.toFixed(1)}`);
for (const [name, make] of Object.entries(cases)) {
  const writes = { 'prom-client': make(kits['prom-client']), lean: make(kits.lean) };
  const figures = await alternatingRounds(writes, ROUNDS, async (write) => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) write(i);
    return Number(process.hrtime.bigint() - start) / OPS;
  });
  const prom = mean(figures['prom-client']!);
  const lean = mean(figures.lean!);
  console.log(`${name}: prom-client ${prom.toFixed(0)} ns, lean ${lean.toFixed(0)} ns per write; lean / prom-client ${(lean / prom).toFixed(2)}`);
}
console.log(`load at the end ${loadavg()[0]!.toFixed(1)}`);
