// npx tsx bench/idle-metrics.bench.ts: what an idle kubeloop process pays for its default metrics, in CPU and
// wake-ups per second: no metrics, prom-client's defaults (event-loop lag sampled every 10 ms) and kubeloop's
// registry (EVENT_LOOP_SAMPLE_MS), each in its own child process at the same time, so load hits all alike.
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const run = promisify(execFile);
const variants = { none: 'no default metrics', 'prom-client default': 'collectDefaultMetrics()', kubeloop: 'createMetricsRegistry()' } as const;
type Variant = keyof typeof variants;

async function child(variant: Variant): Promise<{ cpuMsPerS: number; wakeupsPerS: number }> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', variant], { env: { ...process.env, BENCH_SECONDS: String(SECONDS) } });
  return JSON.parse(stdout) as { cpuMsPerS: number; wakeupsPerS: number };
}

async function measureIdle(variant: Variant): Promise<void> {
  const { collectDefaultMetrics, Registry } = await import('prom-client');
  const { createMetricsRegistry } = await import('../lib/observability/metrics.ts');
  if (variant === 'prom-client default') collectDefaultMetrics({ register: new Registry() });
  if (variant === 'kubeloop') createMetricsRegistry();
  const keepAlive = setInterval(() => {}, 1 << 30);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const cpu = process.cpuUsage();
  const switches = process.resourceUsage().voluntaryContextSwitches;
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const used = process.cpuUsage(cpu);
  const woke = process.resourceUsage().voluntaryContextSwitches - switches;
  clearInterval(keepAlive);
  console.log(JSON.stringify({ cpuMsPerS: (used.user + used.system) / 1000 / SECONDS, wakeupsPerS: woke / SECONDS }));
}

if (process.argv[2] === '--child') {
  await measureIdle(process.argv[3] as Variant);
} else {
  console.log(`idle ${SECONDS} s per variant, all at once; load average ${loadavg()[0]!.toFixed(1)}`);
  const names = Object.keys(variants) as Variant[];
  const results = await Promise.all(names.map(child));
  const base = results[1]!;
  names.forEach((name, i) => {
    const r = results[i]!;
    console.log(`${name.padEnd(20)} ${variants[name].padEnd(26)} ${r.cpuMsPerS.toFixed(2)} ms CPU/s (${(r.cpuMsPerS / base.cpuMsPerS).toFixed(2)}x the default)  ${r.wakeupsPerS.toFixed(1)} wake-ups/s`);
  });
}
