// LeanCounter against prom-client's Counter: the same incs through bound children and label sets give the same
// scrape, byte for byte, in the Prometheus text and the OpenMetrics format, and the same refusals.
import { describe, expect, it } from 'vitest';
import { Counter } from 'prom-client';
import { createMetricsRegistry, openMetricsView } from './metrics.ts';
import { LeanCounter } from './lean-counter.ts';

function twins(labelNames: string[]) {
  const registries = [0, 1].map(() => createMetricsRegistry({ defaultMetrics: false, defaultLabels: { component: 'router' } }));
  const made = registries.map((registry, i) => {
    const config = { name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames, registers: [registry] };
    return i === 0 ? new Counter(config) : new LeanCounter(config);
  });
  const act = (step: (counter: Counter) => void) =>
    made.map((counter) => {
      try {
        step(counter);
        return 'ok';
      } catch (error) {
        return `${(error as Error).name}: ${(error as Error).message}`;
      }
    });
  const scrapes = () => Promise.all(registries.map(async (registry) => [await registry.metrics(), await openMetricsView(registry).metrics()]));
  return { act, scrapes };
}

describe('LeanCounter', () => {
  it('scrapes like prom-client for bound children (label object and values), unbound incs, zeros and resets', async () => {
    const pair = twins(['name', 'controller']);
    pair.act((c) => {
      const bound = c.labels({ name: 'podset', controller: 'podset' });
      bound.inc();
      bound.inc(0);
      bound.inc(2.5);
      c.inc({ name: 'podset', controller: 'podset' });
      c.labels('other', 'other').inc(3);
      c.inc({ controller: 'only' }, 0);
      // Unbound incs: runs of one label set, sets differing in one label or lacking one, a bare value.
      for (const labels of [{ name: 'a', controller: 'a' }, { name: 'a', controller: 'a' }, { name: 'a', controller: 'b' }, { controller: 'b' }, { name: 'a', controller: 'b' }]) c.inc(labels, 2);
      c.inc(5);
      c.inc();
    });
    const [before, beforeOurs] = await pair.scrapes();
    expect(beforeOurs).toEqual(before);
    expect(beforeOurs![1]).toContain('workqueue_adds_total{name="podset",controller="podset",component="router"} 4.5');
    pair.act((c) => {
      c.reset();
      c.labels({ name: 'podset', controller: 'podset' }).inc(null as unknown as number);
      c.labels({ name: 7, controller: 'n' } as never).inc();
    });
    const [theirs, ours] = await pair.scrapes();
    expect(ours).toEqual(theirs);
    expect(ours![1]).toContain('workqueue_adds_total{name="podset",controller="podset",component="router"} 1');
  });

  it('refuses what prom-client refuses, at the same call: unknown labels, negative and non-finite values, a wrong value count', async () => {
    const pair = twins(['loop']);
    const bound = pair.act((c) => c.labels({ loop: 'a', shard: '1' } as never));
    expect(bound).toEqual(['ok', 'ok']);
    for (const step of [
      (c: Counter) => c.labels({ loop: 'a', shard: '1' } as never).inc(),
      (c: Counter) => c.labels({ loop: 'a' }).inc(-1),
      (c: Counter) => c.labels({ loop: 'a' }).inc(Number.POSITIVE_INFINITY),
      (c: Counter) => c.labels('a', 'b'),
      (c: Counter) => c.inc({ loop: 'a', shard: '1' } as never),
      (c: Counter) => c.inc({ loop: 'a' }, -2),
      (c: Counter) => c.inc(Number.NEGATIVE_INFINITY),
    ]) {
      const [theirs, ours] = pair.act(step);
      expect(theirs).not.toBe('ok');
      expect(ours).toBe(theirs);
    }
    // prom-client lets NaN through (it is falsy): so does ours.
    expect(pair.act((c) => c.inc({ loop: 'b' }, Number.NaN))).toEqual(['ok', 'ok']);
    const [theirs, ours] = await pair.scrapes();
    expect(ours).toEqual(theirs);
  });
});
