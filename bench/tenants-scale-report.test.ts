// bench:tenants-scale: sizes are read strictly, and the cost of a tenant is the difference between two sizes.
import { describe, expect, it } from 'vitest';
import { formatScale, hooksAt, parseSizes, quietP99s, tenantCosts, type ScaleRow } from './tenants-scale-report.ts';

const MiB = 1024 * 1024;

function row(tenants: number, over: Partial<ScaleRow> = {}): ScaleRow {
  return {
    tenants,
    hooks: hooksAt(tenants),
    router: { rss: 100 * MiB, cpuMsPerS: 1 },
    gateway: { rss: 80 * MiB, cpuMsPerS: 0.5 },
    watches: 2 * tenants,
    series: 500 + 60 * tenants,
    scrapeCpuMs: 10,
    readyMs: 1000,
    createMs: 500,
    quiet: { aloneP99: 20, busyP99: 30, samples: { alone: 50, busy: 48 } },
    admission: { hookedP99: 12, unhookedP99: 4 },
    restartConvergeMs: 2000,
    ...over,
  };
}

describe('parseSizes', () => {
  it('reads a list, ascending and without repeats', () => {
    expect(parseSizes('1000, 10,100,10')).toEqual([10, 100, 1000]);
  });
  it('names the setting and the bad size', () => {
    expect(() => parseSizes('10,ten')).toThrow('BENCH_TENANTS: "ten" is not a positive whole number of tenants');
    expect(() => parseSizes('0')).toThrow('"0" is not a positive whole number');
    expect(() => parseSizes(' , ')).toThrow('BENCH_TENANTS: no size given');
  });
});

describe('hooksAt', () => {
  it('counts tenants 0, 10, 20...: a tenth, rounded up', () => {
    expect([1, 10, 11, 100, 1000].map(hooksAt)).toEqual([1, 1, 2, 10, 100]);
  });
});

describe('tenantCosts', () => {
  it('divides what grew between consecutive sizes by the tenants added', () => {
    const costs = tenantCosts([
      row(10),
      row(100, { router: { rss: 118 * MiB, cpuMsPerS: 1.9 }, gateway: { rss: 89 * MiB, cpuMsPerS: 0.5 }, restartConvergeMs: 2900 }),
      row(1000, { router: { rss: 208 * MiB, cpuMsPerS: 10.9 }, gateway: { rss: 89 * MiB, cpuMsPerS: 0.5 }, restartConvergeMs: 11_900 }),
    ]);
    expect(costs).toHaveLength(2);
    expect(costs[0]).toMatchObject({ from: 10, to: 100, watches: 2, series: 60 });
    expect(costs[0]!.routerRssMiB).toBeCloseTo(0.2);
    expect(costs[0]!.routerCpuMsPerS).toBeCloseTo(0.01);
    expect(costs[0]!.gatewayRssMiB).toBeCloseTo(0.1);
    expect(costs[0]!.restartMs).toBeCloseTo(10);
    expect(costs[1]!.routerRssMiB).toBeCloseTo(0.1);
    expect(costs[1]!.gatewayRssMiB).toBe(0);
  });
  it('adds what the router and gateway did at rest per tenant where both sizes measured it', () => {
    const rest = (cpuMsPerS: number, getsPerS: number) => ({ seconds: 30, cpuMsPerS, metricsCpuMsPerS: cpuMsPerS, wakeupsPerS: 100, requestsPerS: { GET: getsPerS }, informerEventsPerS: 0, informerEventsByResource: {}, bookmarksPerS: 0, queueAddsPerS: 0, functionCallsPerS: 0 });
    const rows = [row(10, { routerRest: rest(1, 0.1), gatewayRest: rest(2, 0) }), row(100, { routerRest: rest(1.9, 1), gatewayRest: rest(2, 0), settleMs: 8000 })];
    const [cost] = tenantCosts(rows);
    expect(cost!.routerRest!.cpuUsPerS).toBeCloseTo(10);
    expect(cost!.routerRest!.requestsPerHour).toBeCloseTo(36);
    expect(cost!.gatewayRest!.cpuUsPerS).toBe(0);
    const text = formatScale(rows, 'load').join('\n');
    expect(text).toContain('  100 tenants, router (idle after 8.00 s) at rest over 30.0 s: CPU 1.900 ms/s (its /metrics: 1.900), 100.0 wake-ups/s, API requests GET 1.00/s');
    expect(text).toContain('      router at rest: CPU 10.00 us/s (its /metrics 10.00), per hour: 0 wake-ups, 36.0 API requests');
    expect(tenantCosts([row(10), row(100, { routerRest: rest(1, 1) })])[0]!.routerRest).toBeUndefined();
  });
  it('compares the router at rest after both restarts, per size and per added tenant', () => {
    const rest = (cpuMsPerS: number) => ({ seconds: 30, cpuMsPerS, metricsCpuMsPerS: cpuMsPerS, wakeupsPerS: 100, requestsPerS: {}, informerEventsPerS: 0, informerEventsByResource: {}, bookmarksPerS: 0, queueAddsPerS: 0, functionCallsPerS: 0 });
    const restarts = (tenants: number, configuredCpu: number) => ({ args: '--cluster-wide-watch=configmaps', configured: { ms: 1000, watches: 2 * tenants, rss: 100 * MiB, rest: rest(configuredCpu) }, withArgs: { ms: 1000, watches: 2, rss: 100 * MiB, rest: rest(1) } });
    const text = formatScale([row(10, { restartWithArgs: restarts(10, 1.1) }), row(100, { restartWithArgs: restarts(100, 2)})], 'load').join('\n');
    expect(text).toContain('    then as configured at rest over 30.0 s: CPU 2.000 ms/s');
    expect(text).toContain('    with --cluster-wide-watch=configmaps at rest over 30.0 s: CPU 1.000 ms/s');
    expect(text).toContain('    10 -> 100    per added tenant, as configured / with the flags: restart 0.0 / 0.0 ms  watches 2.00 / 0.00  router RSS 0.000 / 0.000 MiB\n      at rest after the restart, per added tenant: as configured CPU 10.00 us/s (its /metrics 10.00), per hour: 0 wake-ups, 0.0 API requests, 0.0 informer events, 0.0 watch bookmarks, 0.0 queue adds, 0.0 function calls; with the flags CPU 0.00 us/s');
  });
  it('sets controller-runtime over the same namespaces beside the router, per size and per added tenant', () => {
    const rest = (cpuMsPerS: number, getsPerS: number) => ({ seconds: 120, cpuMsPerS, metricsCpuMsPerS: 0, wakeupsPerS: 0, requestsPerS: { GET: getsPerS }, informerEventsPerS: 0, informerEventsByResource: {}, bookmarksPerS: 0, queueAddsPerS: 0, functionCallsPerS: 0 });
    const rows = [
      row(10, { routerRest: rest(2, 0), baseline: { rss: 40 * MiB, rest: rest(0.5, 0.05), syncMs: 1500, differs: 0 } }),
      row(1000, { router: { rss: 199 * MiB, cpuMsPerS: 10 }, routerRest: rest(10, 0), baseline: { rss: 139 * MiB, rest: rest(4.46, 4.5), syncMs: 9000, differs: 2 } }),
    ];
    const [cost] = tenantCosts(rows);
    expect(cost!.baseline!.rssMiB).toBeCloseTo(0.1);
    expect(cost!.baseline!.rest.cpuUsPerS).toBeCloseTo(4);
    const text = formatScale(rows, 'load').join('\n');
    expect(text).toContain('  1000 tenants, controller-runtime over the same namespaces (synced 9.00 s after spawn, 2 copies unlike their ConfigMap) at rest over 120.0 s: CPU 4.460 ms/s, API requests GET 4.50/s, RSS 139.0 MiB');
    expect(text).toContain('      controller-runtime over the same namespaces, at rest: RSS 0.100 MiB (the router\'s is 1.00x), CPU 4.00 us/s, 16.2 API requests per hour; the router\'s 8.08 us/s is 2.02x');
    const flat = formatScale([row(10, { routerRest: rest(2, 0), baseline: { rss: 40 * MiB, rest: rest(1, 0), syncMs: 1, differs: 0 } }), row(100, { routerRest: rest(3, 0), baseline: { rss: 40 * MiB, rest: rest(1, 0), syncMs: 1, differs: 0 } })], 'load').join('\n');
    expect(flat).toContain("RSS 0.000 MiB (the router's is n/a), CPU 0.00 us/s, 0.0 API requests per hour; the router's 11.11 us/s is n/a\n");
    const noisy = formatScale([row(10, { routerRest: rest(2, 0), baseline: { rss: 40 * MiB, rest: rest(1, 0), syncMs: 1, differs: 0 } }), row(100, { router: { rss: 99 * MiB, cpuMsPerS: 1 }, routerRest: rest(1.5, 0), baseline: { rss: 49 * MiB, rest: rest(1.9, 0), syncMs: 1, differs: 0 } })], 'load').join('\n');
    expect(noisy).toContain("RSS 0.100 MiB (the router's is n/a), CPU 10.00 us/s, 0.0 API requests per hour; the router's -5.56 us/s is n/a");
  });
  it('has nothing to say about a single size', () => {
    expect(tenantCosts([row(10)])).toEqual([]);
  });
});

describe('formatScale', () => {
  it('prints a row per size, the quiet ratio, the costs and the load', () => {
    const restarts = (tenants: number, withMs: number) => ({ args: '--qps=500', configured: { ms: 2000, watches: 2 * tenants, rss: 100 * MiB + tenants * MiB }, withArgs: { ms: withMs, watches: 2, rss: 100 * MiB } });
    const text = formatScale([row(10, { restartWithArgs: restarts(10, 400) }), row(100, { router: { rss: 118 * MiB, cpuMsPerS: 1.9 }, restartWithArgs: restarts(100, 500) })], 'load average 5.0 on 2 CPUs').join('\n');
    expect(text).toContain('restart at 100 tenants, converged / open watches / router RSS: as configured 2.00 s, 200 watches, 200.0 MiB; with --qps=500 0.50 s, 2 watches, 100.0 MiB (time 0.25x, RSS 0.50x)');
    expect(text).toContain('10 -> 100    per added tenant, as configured / with the flags: restart 0.0 / 1.1 ms  watches 2.00 / 0.00  router RSS 1.000 / 0.000 MiB');
    const scraped = formatScale([row(10, { restartWithArgs: { args: '--loop-metrics-labels=100000', configured: { ms: 1000, watches: 20, rss: 100 * MiB, scrape: { series: 900, scrapeCpuMs: 10 } }, withArgs: { ms: 2000, watches: 20, rss: 100 * MiB, scrape: { series: 1500, scrapeCpuMs: 20 } } } })], 'load').join('\n');
    expect(scraped).toContain('(time 2.00x, RSS 1.00x); /metrics after it: 900 samples (10 ms) as configured, 1500 (20 ms) with them');
    expect(text).toMatch(/ {7}10 {6}1 {3}100\.0 MiB {4}1\.00 ms\/s/);
    expect(text).toContain('20 / 30 ms   1.50');
    expect(text).toContain('12.0 / 4.0 ms');
    expect(text).toContain('1100 (10 ms)');
    expect(text).toContain('10 -> 100    router RSS 0.200 MiB  CPU at rest 0.0100 ms/s');
    expect(text).toContain('(load average 5.0 on 2 CPUs;');
    const asTenants = formatScale([row(10, { quietAsTenants: { aloneP99: 20, busyP99: 50, samples: { alone: 90, busy: 85 } }, quietApf: { aloneP99: 25, busyP99: 30, samples: { alone: 80, busy: 70 }, shares: 2 } })], 'load').join('\n');
    expect(asTenants).toContain('  10 tenants, the same with an APF level of 2 shares for ServiceAccounts: alone 25 / busy 30 ms, ratio 1.20 (80 / 70 changes)');
    expect(asTenants).toContain('  10 tenants, quiet p99 with every tenant writing as its ServiceAccount: alone 20 / busy 50 ms, ratio 2.50 (90 / 85 changes)');
    expect(asTenants).toContain('  10 tenants, quiet p99 as admin drawn from 50 / 48 changes (alone / busy)');
  });
});

describe('quietP99s', () => {
  const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

  it('pools every round for the p99 and keeps each round apart', () => {
    // Round 1: alone 1..100 ms, busy 101..200; round 2: alone 1..100, busy 1..100 (as quiet as alone).
    const q = quietP99s([range(1, 100), range(1, 100)], [range(101, 100), range(1, 100)]);
    expect(q.samples).toEqual({ alone: 200, busy: 200 });
    expect(q.aloneP99).toBe(99);
    expect(q.busyP99).toBe(198);
    expect(q.rounds).toEqual([{ aloneP99: 99, busyP99: 199 }, { aloneP99: 99, busyP99: 99 }]);
  });

  it('leaves the rounds out for one round', () => {
    expect(quietP99s([[5, 10]], [[20]])).toEqual({ aloneP99: 10, busyP99: 20, samples: { alone: 2, busy: 1 } });
  });

  it("prints each round's ratio and their range beside the pooled one", () => {
    const text = formatScale([row(10, { quiet: { aloneP99: 10, busyP99: 18, samples: { alone: 300, busy: 290 }, rounds: [{ aloneP99: 10, busyP99: 12 }, { aloneP99: 8, busyP99: 20 }] } })], 'load').join('\n');
    expect(text).toContain('  10 tenants, quiet p99 as admin drawn from 300 / 290 changes (alone / busy); by round (alone / busy, ratio) 1: 10 / 12 ms 1.20; 2: 8 / 20 ms 2.50; ratios 1.20-2.50, pooled 1.80');
  });

  it('sets the quiet p99s with controller-runtime in the router\'s place beside the router\'s', () => {
    const baselineQuiet = quietP99s([range(1, 100)], [range(51, 100)], { alone: [range(1, 100)], busy: [range(1, 100)] });
    const text = formatScale([row(10, { quiet: { aloneP99: 20, busyP99: 60, samples: { alone: 100, busy: 100 } }, baselineQuiet })], 'load').join('\n');
    expect(text).toContain("  10 tenants, controller-runtime in the router's place (change -> its reconcile): alone 99 / busy 149 ms, ratio 1.51 (100 / 100 changes); of it the quiet PATCH's own round trip (before any controller sees the change) p99 99 / 99 ms, ratio 1.00; the router's ratio is 1.99x its");
  });

  it("pools the quiet PATCH's own round trips and prints their ratio: the API server's part", () => {
    const q = quietP99s([range(20, 100)], [range(30, 100)], { alone: [range(1, 100)], busy: [range(1, 100).map((ms) => ms * 2)] });
    expect(q.writeOnly).toEqual({ aloneP99: 99, busyP99: 198 });
    const text = formatScale([row(10, { quiet: q })], 'load').join('\n');
    expect(text).toContain("quiet p99 as admin drawn from 100 / 100 changes (alone / busy); of it the quiet PATCH's own round trip (before any controller sees the change) p99 99 / 198 ms, ratio 2.00");
  });
});
