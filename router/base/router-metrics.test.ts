import { describe, expect, it } from 'vitest';
import { createMetricsRegistry, openMetricsView } from '../../lib/observability/metrics.ts';
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

  it('shows a Loop\'s condition again when it comes back after being forgotten, whatever it was before', async () => {
    const metrics = fresh();
    metrics.setLoopReady('podset', true);
    metrics.setLoopReady('podset', true);
    metrics.forgetLoop('podset');
    metrics.setLoopReady('podset', true);
    const text = await scrape(metrics);
    expect(text).toContain('kubeloop_loop_condition{loop="podset",type="Ready",status="True"} 1');
    expect(text).toContain('kubeloop_loop_condition{loop="podset",type="Ready",status="False"} 0');
    metrics.setLoopCondition('podset', 'Throttled', true);
    metrics.setLoopCondition('podset', 'Throttled', undefined);
    metrics.setLoopCondition('podset', 'Throttled', true);
    expect(await scrape(metrics)).toContain('kubeloop_loop_condition{loop="podset",type="Throttled",status="True"} 1');
  });

  it('gives the first --loop-metrics-labels Loops their own series and sums every later one into "other", histograms included', async () => {
    const metrics = createRouterMetrics(createMetricsRegistry({ defaultMetrics: false }), 2);
    const queue = (depth: number) => ({ depth: () => depth, activeWorkers: () => 1, processingSince: () => [] });
    for (const [i, loop] of ['a', 'b', 'c', 'd'].entries()) {
      metrics.watchQueue(loop, queue(i + 1), 8);
      const bound = loopMetrics(metrics, loop);
      bound.reconcileTime.observe(0.02);
      bound.results.success.inc();
      metrics.functionCalls.inc({ loop, code: '2xx' });
      metrics.functionLatency.observe({ loop }, 0.01, 'trace-1');
      metrics.actions.inc({ loop, op: 'patch', result: 'ok' });
    }
    const text = await scrape(metrics);
    expect(text).toContain('workqueue_depth{name="a",controller="a"} 1');
    expect(text).toContain('workqueue_depth{name="b",controller="b"} 2');
    expect(text).toContain('workqueue_depth{name="other",controller="other"} 7');
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="other"} 16');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="other"} 2');
    expect(text).toContain('controller_runtime_reconcile_total{controller="other",result="success"} 2');
    expect(text).toContain('kubeloop_router_function_calls_total{loop="other",code="2xx"} 2');
    expect(text).toContain('kubeloop_router_function_call_seconds_count{loop="other"} 2');
    expect(text).toContain('kubeloop_router_actions_total{loop="other",op="patch",result="ok"} 2');
    expect(text).not.toMatch(/(loop|controller|name)="[cd]"/);
    // Four Loops, three sets of series: what 1,000 Loops cost is what N + 1 cost.
    const bucketLines = (t: string) => t.split('\n').filter((l) => l.startsWith('controller_runtime_reconcile_time_seconds_bucket')).length;
    expect(bucketLines(text)).toBe(3 * 41);
  });

  it('keeps "other" while any folded Loop runs, and every Loop\'s condition by name', async () => {
    const metrics = createRouterMetrics(createMetricsRegistry({ defaultMetrics: false }), 1);
    const queue = { depth: () => 1, activeWorkers: () => 0, processingSince: () => [] };
    metrics.watchQueue('a', queue, 1);
    const stopB = metrics.watchQueue('b', queue, 1);
    metrics.watchQueue('c', queue, 1);
    stopB();
    metrics.setLoopReady('c', true);
    const text = await scrape(metrics);
    expect(text).toContain('workqueue_depth{name="other",controller="other"} 1');
    expect(text).toContain('kubeloop_loop_condition{loop="c",type="Ready",status="True"} 1');
  });

  it('keeps a Loop that comes back on its own series, and Loops past the bound in "other" whichever Loops went', async () => {
    const metrics = createRouterMetrics(createMetricsRegistry({ defaultMetrics: false }), 1);
    // A Loop's runner is made (its bound children) and runs a reconcile: what the router writes per Loop and per key.
    const run = (loop: string) => {
      loopMetrics(metrics, loop).adds.inc();
      metrics.functionCalls.inc({ loop, code: '2xx' });
      metrics.reconcileDuration.observe({ loop, result: 'success' }, 0.002, `trace-${loop}`);
    };
    run('a');
    metrics.setLoopReady('a', true);
    metrics.forgetLoop('a');
    for (const loop of ['b', 'c', 'a', 'b']) run(loop);
    const text = await scrape(metrics);
    expect(text).toContain('workqueue_adds_total{name="a",controller="a"} 2');
    expect(text).toContain('workqueue_adds_total{name="other",controller="other"} 3');
    expect(text).toContain('kubeloop_router_function_calls_total{loop="a",code="2xx"} 2');
    expect(text).toContain('kubeloop_router_function_calls_total{loop="other",code="2xx"} 3');
    expect(text).toContain('kubeloop_router_reconcile_duration_seconds_count{loop="other",result="success"} 3');
    expect(text).not.toMatch(/(loop|controller|name)="[bc]"/);
    expect(await openMetricsView(metrics.registry).metrics()).toMatch(/kubeloop_router_reconcile_duration_seconds_bucket\{le="0.0025",loop="other",result="success"\} 3 # \{trace_id="trace-b"\} 0.002 /);
  });
});
