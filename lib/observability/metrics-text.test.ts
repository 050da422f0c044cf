// /metrics rendered a family per event-loop turn, in chunks: the same text as prom-client's own, in both formats, no
// chunk a large string, and a watch event or function reply that arrives during a scrape is handled before it ends.
import { Histogram } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { counter, createMetricsRegistry, exemplarLatencyHistogram, gauge, latencyHistogram, metricsViewFor, openMetricsView, type MetricsView } from './metrics.ts';
import { metricsChunks } from './metrics-text.ts';

async function joined(chunks: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += chunk;
  return text;
}

const renderMetrics = (registry: Parameters<typeof metricsChunks>[0]) => joined(metricsChunks(registry));
const pageOf = async (view: MetricsView) => joined(await view.page());

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

describe('metricsChunks', () => {
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
    expect(await pageOf(open)).toMatch(/# EOF\n$/);
    expect(await pageOf(metricsViewFor(registry, undefined))).toBe(await registry.metrics());
  });

  it("keeps a counter's _total in the Prometheus text after an OpenMetrics scrape of the same registry", async () => {
    const registry = registryOf(1);
    const before = await pageOf(metricsViewFor(registry, undefined));
    expect(before).toContain('kubeloop_test_reconciles_total{');
    const open = await pageOf(metricsViewFor(registry, 'application/openmetrics-text; version=1.0.0'));
    expect(open).toContain('# TYPE kubeloop_test_reconciles counter');
    expect(open).toContain('kubeloop_test_reconciles_total{');
    expect(await pageOf(metricsViewFor(registry, undefined))).toBe(before);
  });

  it('lets I/O that arrives during a scrape run before the scrape is done, not after every family is formatted', async () => {
    const registry = registryOf(50);
    let rendered = false;
    let handledDuringScrape = false;
    const scrape = pageOf(metricsViewFor(registry, undefined)).then(() => (rendered = true));
    // A callback the event loop runs on its next turn, as a watch event's socket read would be.
    setImmediate(() => (handledDuringScrape = !rendered));
    await scrape;
    expect(handledDuringScrape).toBe(true);
  });

  it('hands the page out in chunks of whole lines, none a large string, that join to the text prom-client renders', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false, defaultLabels: { component: 'router' } });
    const conditions = gauge(registry, 'kubeloop_test_condition', 'per Loop', ['loop', 'type', 'status']);
    const calls = latencyHistogram(registry, 'kubeloop_test_call_seconds', 'per Loop', ['loop']);
    for (let l = 0; l < 2000; l++) {
      for (const status of ['True', 'False']) conditions.set({ loop: `scale-${l}/copier`, type: 'Ready', status }, status === 'True' ? 1 : 0);
      calls.observe({ loop: `scale-${l}/copier` }, l / 1000);
    }
    const chunks: string[] = [];
    for await (const chunk of metricsChunks(registry)) chunks.push(chunk);
    expect(chunks.join('')).toBe(await registry.metrics());
    expect(chunks.length).toBeGreaterThan(50);
    // V8 keeps strings over 128 KiB as large objects, which only a mark-compact frees: every chunk stays far below.
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThan(20 * 1024);
      expect(chunk.endsWith('\n')).toBe(true);
    }
  });

  it("writes histograms as prom-client does: several series, default labels a series also carries, exemplars, none labelled, a subclass's own samples", async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false, defaultLabels: { component: 'router', zone: 'a' } });
    const byLoop = exemplarLatencyHistogram(registry, 'kubeloop_test_reconcile_seconds', 'by Loop and result', ['loop', 'result']);
    byLoop.observe({ loop: 'ns-1/a', result: 'ok' }, 0.003, 'trace-1');
    byLoop.observe({ loop: 'ns-1/a', result: 'error' }, 2, 'trace-2');
    byLoop.observe({ loop: 'ns-"2"\\b', result: 'ok' }, 100);
    const shadowing = latencyHistogram(registry, 'kubeloop_test_shadowing_seconds', 'a series label named as a default one', ['component']);
    shadowing.observe({ component: 'gateway' }, 0.2);
    latencyHistogram(registry, 'kubeloop_test_plain_seconds', 'no labels').observe(0.5);
    new Histogram({ name: 'kubeloop_test_collected_seconds', help: 'set at collect', buckets: [1, 2], registers: [registry], collect() {
        this.reset();
        this.observe(1.5);
      } });
    // A subclass with samples of its own (getForPromString is not in prom-client's typings).
    type Samples = { values: Array<{ metricName?: string }> };
    const base = (Histogram.prototype as unknown as { getForPromString(this: Histogram): Promise<Samples> }).getForPromString;
    class Summed extends Histogram {}
    Object.assign(Summed.prototype, {
      async getForPromString(this: Histogram) {
        const family = await base.call(this);
        return { ...family, values: family.values.filter((value) => value.metricName?.endsWith('_sum')) };
      },
    });
    new Summed({ name: 'kubeloop_test_summed_seconds', help: 'its own samples', buckets: [1], registers: [registry] }).observe(3);
    expect(await renderMetrics(registry)).toBe(await registry.metrics());
    const open = openMetricsView(registry);
    expect(await renderMetrics(open)).toBe(await open.metrics());
    expect(await renderMetrics(open)).toMatch(/kubeloop_test_reconcile_seconds_bucket\{le="0.005",component="router",zone="a",loop="ns-1\/a",result="ok"\} 1 # \{trace_id="trace-1"\} 0.003 /);
  });
});
