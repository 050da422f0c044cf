// LeanHistogram against prom-client's Histogram: the same observations (labels, exemplars, bucket edges, values
// refused) give the same scrape, byte for byte, in the Prometheus text and the OpenMetrics format.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Histogram, type HistogramConfiguration } from 'prom-client';
import { createMetricsRegistry, openMetricsView, type Registry } from './metrics.ts';
import { bucketIndex, LeanHistogram } from './lean-histogram.ts';

type Made = Histogram<string>;
const BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

/** Builds the metric with prom-client's class in one registry and ours in another; `act` runs on both. */
function twins(config: Omit<HistogramConfiguration<string>, 'registers'>) {
  const registries = [0, 1].map(() => createMetricsRegistry({ defaultMetrics: false, defaultLabels: { component: 'router' } }));
  const made = registries.map((registry, i) => {
    const histogram: Made = i === 0 ? new Histogram({ ...config, registers: [] }) : new LeanHistogram({ ...config, registers: [] });
    registry.registerMetric(histogram);
    return histogram;
  });
  return {
    /** Runs `act` on both; what either throws is returned, so a refusal is compared too. */
    act(act: (histogram: Made) => void): string[] {
      return made.map((histogram) => {
        try {
          act(histogram);
          return 'ok';
        } catch (error) {
          return `${(error as Error).name}: ${(error as Error).message}`;
        }
      });
    },
    async scrapes(): Promise<Array<{ text: string; open: string }>> {
      return Promise.all(registries.map(async (registry: Registry) => ({ text: await registry.metrics(), open: await openMetricsView(registry).metrics() })));
    },
  };
}

async function expectSameScrape(pair: ReturnType<typeof twins>) {
  const [theirs, ours] = await pair.scrapes();
  expect(ours!.text).toBe(theirs!.text);
  expect(ours!.open).toBe(theirs!.open);
}

beforeEach(() => {
  // Exemplars carry a timestamp: both classes read the same clock.
  vi.spyOn(Date, 'now').mockReturnValue(1_790_000_000_123);
});
afterEach(() => vi.restoreAllMocks());

describe('LeanHistogram', () => {
  it('scrapes like prom-client for observations at, between and beyond the bucket edges, by labels, child and bare value', async () => {
    const pair = twins({ name: 'rest_client_request_duration_seconds', help: 'Request latency', labelNames: ['verb', 'host'], buckets: BUCKETS });
    const values = [0, -3, 1e-9, 0.005, 0.0050001, 0.1, 0.3, 60, 60.0001, 1e9, 2.5];
    for (const value of values) pair.act((h) => h.observe({ verb: 'PATCH', host: 'api' }, value));
    for (const value of values) pair.act((h) => h.labels({ verb: 'GET', host: 'api' }).observe(value));
    const child = pair.act((h) => {
      const bound = h.labels('LIST', 'other');
      for (const value of values) bound.observe(value);
    });
    expect(child).toEqual(['ok', 'ok']);
    // Runs of one label set, then sets that differ in one label only, or lack one.
    for (const labels of [{ verb: 'PATCH', host: 'api' }, { verb: 'GET', host: 'api' }, { host: 'api' }, { verb: 'GET', host: 'api' }, { verb: 'GET', host: 'api2' }]) pair.act((h) => h.observe(labels, 0.03));
    pair.act((h) => h.observe({ host: 'only-host' }, 0.2));
    pair.act((h) => h.observe({ verb: 'GET', host: 7 } as never, 0.2));
    await expectSameScrape(pair);
  });

  it('refuses NaN, infinities and unknown labels as prom-client does, and counts nothing for them', async () => {
    const pair = twins({ name: 'calls_seconds', help: 'x', labelNames: ['loop'], buckets: BUCKETS });
    const child = pair.act((h) => h.labels({ loop: 'a' }).observe(0.1));
    expect(child).toEqual(['ok', 'ok']);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, undefined as unknown as number]) {
      const [theirs, ours] = pair.act((h) => h.observe({ loop: 'a' }, bad));
      expect(theirs).toMatch(/^TypeError: Value is not a valid number/);
      expect(ours).toBe(theirs);
      const [childTheirs, childOurs] = pair.act((h) => h.labels({ loop: 'a' }).observe(bad));
      expect(childOurs).toBe(childTheirs);
    }
    const [theirs, ours] = pair.act((h) => h.observe({ loop: 'a', shard: '1' } as never, 0.1));
    expect(theirs).toMatch(/not included in initial labelset/);
    expect(ours).toBe(theirs);
    expect(pair.act((h) => h.labels('a', 'b'))).toEqual(pair.act(() => new Histogram({ name: 'y', help: 'y', labelNames: ['loop'], registers: [] }).labels('a', 'b')));
    await expectSameScrape(pair);
  });

  it('scrapes like prom-client for an unlabelled histogram: observe(value), observe(0), reset, zero and remove', async () => {
    const pair = twins({ name: 'batch_size', help: 'Calls per batch', buckets: [2, 4, 8, 16, 32, 64] });
    for (const value of [0, 1, 2, 3, 64, 65, -1]) pair.act((h) => h.observe(value));
    await expectSameScrape(pair);
    const labelled = twins({ name: 'queue_seconds', help: 'Queue wait', labelNames: ['name'], buckets: BUCKETS });
    labelled.act((h) => {
      const bound = h.labels({ name: 'podset' });
      bound.observe(0.01);
      h.reset();
      bound.observe(0.02);
      h.remove({ name: 'podset' });
      h.zero({ name: 'other' });
      bound.observe(0.03);
      h.labels({ name: 'other' }).observe(5);
    });
    await expectSameScrape(labelled);
  });

  it('keeps the latest exemplar per bucket, +Inf included, and renders it only in OpenMetrics, as prom-client does', async () => {
    const pair = twins({ name: 'kubeloop_router_function_call_seconds', help: 'Function call round trip', labelNames: ['loop'], buckets: BUCKETS, enableExemplars: true });
    const observations: Array<[string, number, string | undefined]> = [
      ['podset', 0.003, 'aaaa'], ['podset', 0.004, 'bbbb'], ['podset', 0.2, undefined], ['podset', 100, 'cccc'],
      ['other', 0, 'dddd'], ['other', -1, undefined], ['other', 60, 'eeee'], ['other', 0.005, undefined],
    ];
    for (const [loop, value, trace] of observations) {
      pair.act((h) => h.observe({ labels: { loop }, value, ...(trace ? { exemplarLabels: { trace_id: trace } } : {}) }));
    }
    // A label set over 128 characters: prom-client counts the observation, then refuses the exemplar.
    const [theirs, ours] = pair.act((h) => h.observe({ labels: { loop: 'podset' }, value: 1, exemplarLabels: { trace_id: 'x'.repeat(200) } }));
    expect(theirs).toMatch(/^RangeError/);
    expect(ours).toBe(theirs);
    const [open] = await pair.scrapes();
    expect(open!.open).toContain('le="+Inf",component="router",loop="podset"} 5 # {trace_id="cccc"} 100 1790000000.123');
    await expectSameScrape(pair);
  });

  it('records through observeLabelled what the exemplar observe records', async () => {
    const config = { name: 'reconcile_seconds', help: 'One reconcile', labelNames: ['loop', 'result'], buckets: BUCKETS, enableExemplars: true };
    const pair = twins(config);
    const [theirs, ours] = pair.act((h) => {
      if (h instanceof LeanHistogram) {
        h.observeLabelled({ loop: 'a', result: 'success' }, 0.01, { trace_id: 't1' });
        h.observeLabelled({ loop: 'a', result: 'success' }, 0.02);
        h.observeLabelled({ loop: 'a', result: 'error' }, 0.02, {});
      } else {
        h.observe({ labels: { loop: 'a', result: 'success' }, value: 0.01, exemplarLabels: { trace_id: 't1' } });
        h.observe({ labels: { loop: 'a', result: 'success' }, value: 0.02, exemplarLabels: {} });
        h.observe({ labels: { loop: 'a', result: 'error' }, value: 0.02, exemplarLabels: {} });
      }
    });
    expect(ours).toBe(theirs);
    await expectSameScrape(pair);
  });
});

describe('bucketIndex', () => {
  it('finds the first bound at or above the value, past the end for the +Inf bucket only', () => {
    expect([-1, 0, 0.005, 0.006, 60, 61].map((v) => bucketIndex(BUCKETS, v))).toEqual([0, 0, 0, 1, 11, 12]);
  });
});
