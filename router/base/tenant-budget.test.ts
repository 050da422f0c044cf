import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TenantBudget } from './tenant-budget.ts';

/** Takes `n` tokens for a Loop in a loop, recording the time each request got through. */
function hammer(take: () => Promise<void>, n: number, log: number[]): Promise<void> {
  return (async () => {
    for (let i = 0; i < n; i += 1) {
      await take();
      log.push(Date.now());
    }
  })();
}

describe('TenantBudget', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  it('lets a lone Loop use the whole budget: burst at once, then the full rate', async () => {
    const budget = new TenantBudget({ limit: { qps: 100, burst: 10 }, weightOf: () => 1, now: () => Date.now() });
    const log: number[] = [];
    const done = hammer(budget.forLoop('team-a', 'team-a/l').take, 110, log);
    await vi.advanceTimersByTimeAsync(1000);
    await done;
    expect(log.filter((t) => t === 0)).toHaveLength(10);
    // 100 more at 100/s: all through within the second.
    expect(log).toHaveLength(110);
  });

  it('splits a saturated budget between busy tenants by weight, not by how many Loops or requests each has', async () => {
    const budget = new TenantBudget({ limit: { qps: 100, burst: 1 }, weightOf: (t) => (t === 'heavy' ? 3 : 1), now: () => Date.now() });
    const heavy: number[] = [];
    const light: number[] = [];
    // The light tenant has four Loops hammering; the heavy one a single Loop.
    void hammer(budget.forLoop('heavy', 'heavy/l').take, 10_000, heavy);
    for (let i = 0; i < 4; i += 1) void hammer(budget.forLoop('light', `light/${i}`).take, 10_000, light);
    await vi.advanceTimersByTimeAsync(10_000);
    const ratio = heavy.length / light.length;
    expect(ratio).toBeGreaterThan(2.7);
    expect(ratio).toBeLessThan(3.3);
    expect(heavy.length + light.length).toBeGreaterThan(950);
  });

  it("a quiet tenant's request waits for one token, not behind a neighbour's queue of thousands", async () => {
    const budget = new TenantBudget({ limit: { qps: 10, burst: 1 }, weightOf: () => 1, now: () => Date.now() });
    const noisy: number[] = [];
    void hammer(budget.forLoop('noisy', 'noisy/l').take, 5000, noisy);
    for (let i = 0; i < 50; i += 1) void budget.forLoop('noisy', `noisy/${i}`).take();
    await vi.advanceTimersByTimeAsync(1000);
    let passedAt: number | undefined;
    void budget.forLoop('quiet', 'quiet/l').take().then(() => (passedAt = Date.now()));
    await vi.advanceTimersByTimeAsync(1000);
    expect(passedAt).toBeDefined();
    expect(passedAt! - 1000).toBeLessThanOrEqual(200);
  });

  it('applies a per-Loop cap before the shared budget', async () => {
    const budget = new TenantBudget({ limit: { qps: 1000, burst: 1000 }, weightOf: () => 1, now: () => Date.now() });
    const log: number[] = [];
    void hammer(budget.forLoop('a', 'a/l', { qps: 10, burst: 5 }).take, 1000, log);
    await vi.advanceTimersByTimeAsync(1000);
    expect(log.length).toBeGreaterThanOrEqual(14);
    expect(log.length).toBeLessThanOrEqual(16);
  });

  it('counts the time a tenant had requests waiting and reports each wait per Loop', async () => {
    const waits: Array<[string, string, number]> = [];
    const budget = new TenantBudget({ limit: { qps: 10, burst: 2 }, weightOf: () => 1, now: () => Date.now(), onWait: (tenant, loop, seconds) => waits.push([tenant, loop, seconds]) });
    const loop = budget.forLoop('a', 'a/l');
    await Promise.all([loop.take(), loop.take()]);
    expect(budget.shares()[0]?.throttledMs).toBe(0);
    const third = loop.take();
    await vi.advanceTimersByTimeAsync(100);
    await third;
    expect(waits).toEqual([['a', 'a/l', 0.1]]);
    expect(budget.shares()[0]?.throttledMs).toBe(100);
    expect(loop.throttledMs()).toBe(100);
  });

  it('forgets a tenant once its last Loop closed its limiter', () => {
    const budget = new TenantBudget({ limit: { qps: 10, burst: 2 }, weightOf: () => 1, now: () => Date.now() });
    const a = budget.forLoop('a', 'a/1');
    const b = budget.forLoop('a', 'a/2');
    a.close();
    expect(budget.shares().map((s) => s.tenant)).toEqual(['a']);
    b.close();
    expect(budget.shares()).toEqual([]);
  });

  it('with qps 0, never waits', async () => {
    const budget = new TenantBudget({ limit: { qps: 0, burst: 1 }, weightOf: () => 1 });
    const loop = budget.forLoop('a', 'a/l');
    await Promise.all(Array.from({ length: 1000 }, () => loop.take()));
    expect(budget.shares()[0]?.waiting).toBe(0);
  });
});
