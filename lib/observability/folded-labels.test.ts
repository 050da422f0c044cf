// Folding inside the lean classes against prom-client's own classes fed the folded label sets by hand: the same
// scrape, byte for byte, in both formats, for Loops within the bound, beyond it, interleaved, removed and back.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Counter, Histogram } from 'prom-client';
import { BoundedLabel, OTHER_LABEL } from './bounded-label.ts';
import { LabelFold } from './folded-labels.ts';
import { LeanCounter } from './lean-counter.ts';
import { LeanHistogram } from './lean-histogram.ts';
import { createMetricsRegistry, openMetricsView, type Registry } from './metrics.ts';

type Labels = Record<string, string>;
const FOLDED = ['loop', 'name', 'controller'];
/** With a bound of 2, the first two Loops written keep their name: a and b (the writes below start with them). */
const byHand = (value: string) => (value === 'a' || value === 'b' ? value : OTHER_LABEL);
const foldByHand = (labels: Labels): Labels => Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, FOLDED.includes(k) ? byHand(v) : v]));
const sharedByHand = (labels: Labels) => FOLDED.some((k) => labels[k] !== undefined && byHand(labels[k]) === OTHER_LABEL);

/** prom-client's metric, given folded labels, in one registry; ours, given the Loops' names, in another. */
function twins<M extends Counter | Histogram>(make: (folding: { labels: string[]; into: BoundedLabel } | undefined) => M) {
  const registries = [0, 1].map(() => createMetricsRegistry({ defaultMetrics: false, defaultLabels: { component: 'router' } }));
  const [theirs, ours] = [make(undefined), make({ labels: FOLDED, into: new BoundedLabel(2) })];
  registries.forEach((registry, i) => registry.registerMetric([theirs, ours][i]!));
  return {
    /** `write(metric, fold)` on both: prom-client's with labels folded by hand, ours with them as given. */
    write(write: (metric: M, fold: (labels: Labels) => Labels) => void) {
      write(theirs, foldByHand);
      write(ours, (labels) => labels);
    },
    /** remove() on both: prom-client's skipped by hand for a series shared in "other". */
    remove(labels: Labels) {
      if (!sharedByHand(labels)) theirs.remove(foldByHand(labels));
      ours.remove(labels);
    },
    async expectSameScrape() {
      const [a, b] = await Promise.all(registries.map(async (r: Registry) => ({ text: await r.metrics(), open: await openMetricsView(r).metrics() })));
      expect(b!.text).toBe(a!.text);
      expect(b!.open).toBe(a!.open);
      // OpenMetrics: prom-client drops a counter's `_total` from its name in the Prometheus text once it was scraped so.
      return b!.open;
    },
  };
}

beforeEach(() => vi.spyOn(Date, 'now').mockReturnValue(1_790_000_000_123));
afterEach(() => vi.restoreAllMocks());

describe('folded labels in the lean metric classes', () => {
  it('counts Loops beyond the bound in "other", interleaved with named ones, by label set, child and values', async () => {
    const pair = twins((folding) => (folding ? new LeanCounter({ name: 'calls_total', help: 'calls', labelNames: ['loop', 'code'], registers: [] }, folding) : new Counter({ name: 'calls_total', help: 'calls', labelNames: ['loop', 'code'], registers: [] })));
    for (const loop of ['a', 'b', 'c', 'd', 'c', 'a', 'd', 'd', 'b', 'c']) pair.write((m, fold) => m.inc(fold({ loop, code: '2xx' })));
    pair.write((m, fold) => m.inc(fold({ loop: 'e', code: '5xx' }), 3));
    pair.write((m, fold) => m.labels(fold({ loop: 'c', code: '2xx' })).inc(2));
    pair.write((m, fold) => m.labels(...Object.values(fold({ loop: 'd', code: '4xx' }))).inc());
    const text = await pair.expectSameScrape();
    expect(text).toContain('calls_total{loop="other",code="2xx",component="router"} 8');
    expect(text).toContain('calls_total{loop="a",code="2xx",component="router"} 2');
    expect(text).not.toMatch(/loop="[cde]"/);
  });

  it('removes a named Loop\'s series, never the shared "other" one, and counts a Loop that comes back afresh', async () => {
    const pair = twins((folding) => (folding ? new LeanCounter({ name: 'adds_total', help: 'adds', labelNames: ['name', 'controller'], registers: [] }, folding) : new Counter({ name: 'adds_total', help: 'adds', labelNames: ['name', 'controller'], registers: [] })));
    const children: Array<Counter.Internal> = [];
    pair.write((m, fold) => children.push(m.labels(fold({ name: 'a', controller: 'a' }))));
    for (const loop of ['a', 'b', 'c', 'd']) pair.write((m, fold) => m.inc(fold({ name: loop, controller: loop }), 5));
    pair.remove({ name: 'c', controller: 'c' });
    pair.remove({ name: 'a', controller: 'a' });
    expect(await pair.expectSameScrape()).toContain('adds_total{name="other",controller="other",component="router"} 10');
    // The Loop comes back: its child from before and a new label set both write to a series started again.
    for (const child of children) child.inc();
    pair.write((m, fold) => m.inc(fold({ name: 'a', controller: 'a' })));
    pair.write((m, fold) => m.inc(fold({ name: 'd', controller: 'd' })));
    const text = await pair.expectSameScrape();
    expect(text).toContain('adds_total{name="a",controller="a",component="router"} 2');
    expect(text).toContain('adds_total{name="other",controller="other",component="router"} 11');
  });

  it('observes histograms with exemplars, children, zero and remove into the same series', async () => {
    const config = { name: 'call_seconds', help: 'calls', labelNames: ['loop'], buckets: [0.01, 0.1, 1], registers: [], enableExemplars: true };
    const pair = twins((folding) => (folding ? new LeanHistogram(config, folding) : new Histogram(config)));
    const observations: Array<[string, number]> = [['a', 0.005], ['b', 0.5], ['c', 0.05], ['d', 5], ['c', 0.02], ['a', 0.2]];
    // Zeroed up front, as controller-runtime does: a and b take the bound's two names, e starts "other".
    for (const loop of ['a', 'b', 'e']) pair.write((m, fold) => m.zero(fold({ loop })));
    for (const [loop, value] of observations) pair.write((m, fold) => m.observe({ labels: fold({ loop }), value, exemplarLabels: { trace_id: `t-${loop}-${value}` } }));
    pair.write((m, fold) => m.labels(fold({ loop: 'd' })).observe(0.03));
    pair.remove({ loop: 'd' });
    pair.remove({ loop: 'a' });
    const text = await pair.expectSameScrape();
    expect(text).toContain('call_seconds_count{component="router",loop="other"} 4');
    expect(text).not.toContain('loop="a"');
    const plain = twins((folding) => (folding ? new LeanHistogram({ ...config, enableExemplars: false }, folding) : new Histogram({ ...config, enableExemplars: false })));
    for (const [loop, value] of observations) plain.write((m, fold) => m.observe(fold({ loop }), value));
    await plain.expectSameScrape();
  });

  it('folds none of a metric\'s labels when it has none of the folded names', () => {
    expect(LabelFold.of(['verb', 'host'], { labels: FOLDED, into: new BoundedLabel(0) })).toBeUndefined();
    const fold = LabelFold.of(['code', 'loop'], { labels: FOLDED, into: new BoundedLabel(1) })!;
    const labels = { code: '2xx', loop: 'a' };
    expect(fold.labels(labels)).toBe(labels);
    expect(fold.args(['2xx', 'b'])).toEqual(['2xx', OTHER_LABEL]);
    expect(fold.shared([{ loop: 'b' }])).toBe(true);
    expect(fold.shared(['5xx', 'a'])).toBe(false);
  });
});
