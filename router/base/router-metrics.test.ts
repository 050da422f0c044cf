import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import { createRouterMetrics, loopMetrics, WORKQUEUE_BUCKETS } from './router-metrics.ts';
import { WorkQueue } from './work-queue.ts';

async function scrape(metrics: ReturnType<typeof createRouterMetrics>): Promise<string> {
  return metrics.registry.metrics();
}

function fresh() {
  return createRouterMetrics(createMetricsRegistry({ defaultMetrics: false }));
}

describe('router metrics', () => {
  it('uses client-go\'s workqueue buckets, 10 ns to 1000 s', () => {
    expect(WORKQUEUE_BUCKETS).toEqual([1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000]);
  });

  it('reads depth, active workers, unfinished work and the longest running processor from the queue at scrape time', async () => {
    const metrics = fresh();
    const now = performance.now();
    const unwatch = metrics.watchQueue('podset', { depth: () => 7, activeWorkers: () => 2, processingSince: () => [now - 30_000, now - 10_000] }, 4);
    const text = await scrape(metrics);
    expect(text).toContain('workqueue_depth{name="podset",controller="podset"} 7');
    expect(text).toContain('controller_runtime_active_workers{controller="podset"} 2');
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="podset"} 4');
    expect(text).toContain('controller_runtime_reconcile_total{controller="podset",result="error"} 0');
    const unfinished = Number(/workqueue_unfinished_work_seconds\{name="podset",controller="podset"\} ([\d.]+)/.exec(text)?.[1]);
    const longest = Number(/workqueue_longest_running_processor_seconds\{name="podset",controller="podset"\} ([\d.]+)/.exec(text)?.[1]);
    expect(unfinished).toBeGreaterThanOrEqual(40);
    expect(longest).toBeGreaterThanOrEqual(30);
    expect(longest).toBeLessThan(unfinished);
    unwatch();
    const after = await scrape(metrics);
    expect(after).not.toContain('workqueue_depth{name="podset"');
    expect(after).not.toContain('controller_runtime_max_concurrent_reconciles{controller="podset"}');
  });

  it('reports 0 s of unfinished work while nothing is processed', async () => {
    const metrics = fresh();
    metrics.watchQueue('at', { depth: () => 0, activeWorkers: () => 0, processingSince: () => [] }, 1);
    const text = await scrape(metrics);
    expect(text).toContain('workqueue_unfinished_work_seconds{name="at",controller="at"} 0');
    expect(text).toContain('workqueue_longest_running_processor_seconds{name="at",controller="at"} 0');
  });

  it('counts every add and every delayed add of a work queue', async () => {
    const metrics = fresh();
    const bound = loopMetrics(metrics, 'podset');
    const queue = new WorkQueue<null>({ concurrency: 1, process: async () => {}, onAdd: () => bound.adds.inc(), onDelayedAdd: () => bound.retries.inc() });
    queue.add('a', null);
    queue.add('a', null);
    queue.addAfter('b', null, 60_000);
    queue.addRateLimited('c', null);
    await queue.shutdown();
    const text = await scrape(metrics);
    expect(text).toContain('workqueue_adds_total{name="podset",controller="podset"} 2');
    expect(text).toContain('workqueue_retries_total{name="podset",controller="podset"} 2');
  });

  it('keeps a Loop\'s Ready condition as a True/False pair and forgets it with the Loop', async () => {
    const metrics = fresh();
    metrics.setLoopReady('podset', false);
    let text = await scrape(metrics);
    expect(text).toContain('kubeloop_loop_condition{loop="podset",type="Ready",status="False"} 1');
    expect(text).toContain('kubeloop_loop_condition{loop="podset",type="Ready",status="True"} 0');
    metrics.setLoopReady('podset', true);
    text = await scrape(metrics);
    expect(text).toContain('kubeloop_loop_condition{loop="podset",type="Ready",status="True"} 1');
    metrics.forgetLoop('podset');
    expect(await scrape(metrics)).not.toContain('kubeloop_loop_condition{loop="podset"');
  });
});
