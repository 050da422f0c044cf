// The shared metrics registry: an idle process holding it sleeps (the event-loop lag sampler is coarse); its
// OpenMetrics view lists each metric once, scrape after scrape.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { counter, createMetricsRegistry, openMetricsView } from './metrics.ts';

const run = promisify(execFile);
const metrics = fileURLToPath(new URL('./metrics.ts', import.meta.url));

/** Wake-ups per second of an idle process holding one registry (voluntary context switches: the loop woke). */
async function idleWakeups(): Promise<number> {
  const code = [
    `const { createMetricsRegistry } = await import(${JSON.stringify(metrics)});`,
    'createMetricsRegistry();',
    'const keep = setInterval(() => {}, 1 << 30);',
    'await new Promise((r) => setTimeout(r, 500));',
    'const before = process.resourceUsage().voluntaryContextSwitches;',
    'await new Promise((r) => setTimeout(r, 2000));',
    'console.log((process.resourceUsage().voluntaryContextSwitches - before) / 2);',
    'clearInterval(keep);',
  ].join('\n');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code]);
  return Number(stdout.trim());
}

describe('createMetricsRegistry', () => {
  it('lets an idle process sleep: the event-loop lag sampler wakes it about 10 times a second, not 100 (prom-client\'s default)', async () => {
    expect(await idleWakeups()).toBeLessThan(40);
  }, 20_000);
});

describe('the OpenMetrics view', () => {
  it('lists a counter once however often it is scraped', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    counter(registry, 'kubeloop_router_reconciles_total', 'Reconciles').inc(2);
    await openMetricsView(registry).metrics();
    const second = await openMetricsView(registry).metrics();
    expect(second.match(/^# TYPE kubeloop_router_reconciles counter$/gm)).toHaveLength(1);
    expect(second.match(/^kubeloop_router_reconciles_total 2$/gm)).toHaveLength(1);
  });
});
