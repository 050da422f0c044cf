// /metrics rendered a family per event-loop turn: the same text as prom-client's own, in both formats, and a watch
// event or function reply that arrives during a scrape is handled before the scrape ends, not after it.
import { describe, expect, it } from 'vitest';
import { counter, createMetricsRegistry, exemplarLatencyHistogram, gauge, metricsViewFor, openMetricsView } from './metrics.ts';
import { renderMetrics } from './metrics-text.ts';

function registryOf(families: number) {
  const registry = createMetricsRegistry({ defaultMetrics: false, defaultLabels: { component: 'router' } });
  for (let i = 0; i < families; i++) {
    const perLoop = gauge(registry, `kubeloop_test_gauge_${i}`, 'per Loop', ['loop']);
    for (let l = 0; l < 20; l++) perLoop.set({ loop: `ns-${l}/copier` }, l);
  }
  counter(registry, 'kubeloop_test_reconciles_total', 'Reconciles', ['loop']).inc({ loop: 'a "quoted"\nname' }, 3);
  exemplarLatencyHistogram(registry, 'kubeloop_test_call_seconds', 'Calls', ['loop']).observe({ loop: 'x' }, 0.02, 'abc123');
  return registry;
}

describe('renderMetrics', () => {
  it("renders the same text as prom-client's registry.metrics(), Prometheus and OpenMetrics alike", async () => {
    const registry = registryOf(5);
    expect(await renderMetrics(registry)).toBe(await registry.metrics());
    // The OpenMetrics view renames its counters on its first render, whichever renders first.
    const mineFirst = openMetricsView(registry);
    expect(await renderMetrics(mineFirst)).toBe(await mineFirst.metrics());
    const other = registryOf(5);
    const theirsFirst = await openMetricsView(other).metrics();
    expect(await renderMetrics(openMetricsView(other))).toBe(theirsFirst);
    expect(await renderMetrics(other)).toBe(await other.metrics());
  });

  it("keeps each series' label text between scrapes, yet renders what prom-client renders after values, series, defaults or a labels object change", async () => {
    const registry = registryOf(2);
    const perLoop = gauge(registry, 'kubeloop_test_changing', 'changing', ['loop', 'type']);
    perLoop.set({ loop: 'ns-1/a', type: 'Ready' }, 1);
    perLoop.set({ loop: 'ns-2/b', type: 'Ready' }, 0);
    expect(await renderMetrics(registry)).toBe(await registry.metrics());
    perLoop.set({ loop: 'ns-1/a', type: 'Ready' }, 0);
    perLoop.remove({ loop: 'ns-2/b', type: 'Ready' });
    perLoop.set({ loop: 'ns-3/"c"\\', type: 'Stalled' }, 1);
    expect(await renderMetrics(registry)).toBe(await registry.metrics());
    // A labels object prom-client holds, changed in place (nothing in kubeloop does; a kept text must not outlive it).
    const series = Object.values((perLoop as unknown as { hashMap: Record<string, { labels: Record<string, string> }> }).hashMap);
    series[0]!.labels.loop = 'ns-9/renamed';
    const after = await renderMetrics(registry);
    expect(after).toContain('loop="ns-9/renamed"');
    expect(after).toBe(await registry.metrics());
    registry.setDefaultLabels({ component: 'gateway' });
    expect(await renderMetrics(registry)).toBe(await registry.metrics());
    expect(await renderMetrics(openMetricsView(registry))).toBe(await openMetricsView(registry).metrics());
  });

  it('serves GET /metrics through it: the view for an Accept header renders as prom-client does', async () => {
    const registry = registryOf(3);
    const open = metricsViewFor(registry, 'application/openmetrics-text; version=1.0.0');
    expect(open.contentType).toContain('application/openmetrics-text');
    expect(await open.metrics()).toMatch(/# EOF\n$/);
    expect(await metricsViewFor(registry, undefined).metrics()).toBe(await registry.metrics());
  });

  it("keeps a counter's _total in the Prometheus text after an OpenMetrics scrape of the same registry", async () => {
    const registry = registryOf(1);
    const before = await metricsViewFor(registry, undefined).metrics();
    expect(before).toContain('kubeloop_test_reconciles_total{');
    const open = await metricsViewFor(registry, 'application/openmetrics-text; version=1.0.0').metrics();
    expect(open).toContain('# TYPE kubeloop_test_reconciles counter');
    expect(open).toContain('kubeloop_test_reconciles_total{');
    expect(await metricsViewFor(registry, undefined).metrics()).toBe(before);
  });

  it('lets I/O that arrives during a scrape run before the scrape is done, not after every family is formatted', async () => {
    const registry = registryOf(50);
    let rendered = false;
    let handledDuringScrape = false;
    const scrape = metricsViewFor(registry, undefined).metrics().then(() => (rendered = true));
    // A callback the event loop runs on its next turn, as a watch event's socket read would be.
    setImmediate(() => (handledDuringScrape = !rendered));
    await scrape;
    expect(handledDuringScrape).toBe(true);
  });
});
