import { describe, expect, it } from 'vitest';
import { BoundedLabel } from './bounded-label.ts';
import { foldLabels } from './folded-labels.ts';
import { counter, createMetricsRegistry, exemplarLatencyHistogram, gauge } from './metrics.ts';

describe('foldLabels', () => {
  it('folds the named labels on inc, observe (exemplars too), labels() and set, and leaves the others', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const bound = new BoundedLabel(1);
    const fold = (v: string) => bound.of(v);
    const calls = foldLabels(counter(registry, 'calls_total', 'calls', ['loop', 'code']), ['loop'], fold);
    const latency = foldLabels(exemplarLatencyHistogram(registry, 'latency_seconds', 'latency', ['loop']), ['loop'], fold);
    const depth = foldLabels(gauge(registry, 'depth', 'depth', ['loop']), ['loop'], fold);
    calls.inc({ loop: 'first', code: '2xx' });
    calls.inc({ loop: 'second', code: '2xx' }, 2);
    calls.labels({ loop: 'third', code: '5xx' }).inc();
    latency.observe({ loop: 'second' }, 0.1, 'trace');
    depth.set({ loop: 'third' }, 3);
    const text = await registry.metrics();
    expect(text).toContain('calls_total{loop="first",code="2xx"} 1');
    expect(text).toContain('calls_total{loop="other",code="2xx"} 2');
    expect(text).toContain('calls_total{loop="other",code="5xx"} 1');
    expect(text).toContain('latency_seconds_count{loop="other"} 1');
    expect(text).toContain('depth{loop="other"} 3');
  });

  it('removes a labelled series, never the shared "other" one', async () => {
    const registry = createMetricsRegistry({ defaultMetrics: false });
    const bound = new BoundedLabel(1);
    const depth = foldLabels(gauge(registry, 'depth', 'depth', ['loop']), ['loop'], (v) => bound.of(v));
    depth.set({ loop: 'a' }, 1);
    depth.set({ loop: 'b' }, 2);
    depth.remove({ loop: 'b' });
    depth.remove({ loop: 'a' });
    const text = await registry.metrics();
    expect(text).toContain('depth{loop="other"} 2');
    expect(text).not.toContain('depth{loop="a"}');
  });
});
