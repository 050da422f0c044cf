import { describe, expect, it } from 'vitest';
import { TenantEventBuckets, tenantShare } from './event-budget.ts';

const taken = (buckets: TenantEventBuckets, tenant: string, n: number) => Array.from({ length: n }, () => buckets.tryTake(tenant)).filter(Boolean).length;

describe('per-tenant event buckets', () => {
  it("keeps team b's events while team a floods: each empties only its own share", () => {
    let now = 0;
    const buckets = new TenantEventBuckets({ qps: 10, burst: 50 }, () => 1, () => now);
    // Team a alone: the whole burst.
    expect(taken(buckets, 'team-a', 1000)).toBe(50);
    // Team b arrives while team a still floods: its half of the burst is there at once.
    expect(taken(buckets, 'team-b', 30)).toBe(25);
    expect(taken(buckets, 'team-a', 1000)).toBe(0);
    // Then each gets its half of the rate.
    now += 2000;
    expect(taken(buckets, 'team-a', 1000)).toBe(10);
    expect(taken(buckets, 'team-b', 1000)).toBe(10);
  });

  it('shares by weight, as the fair scheduler does', () => {
    let now = 0;
    const weights: Record<string, number> = { 'team-a': 3, 'team-b': 1 };
    const buckets = new TenantEventBuckets({ qps: 8, burst: 8 }, (t) => weights[t] ?? 1, () => now);
    buckets.tryTake('team-a');
    buckets.tryTake('team-b');
    taken(buckets, 'team-a', 100);
    taken(buckets, 'team-b', 100);
    now += 1000;
    expect(taken(buckets, 'team-a', 100)).toBe(6);
    expect(taken(buckets, 'team-b', 100)).toBe(2);
  });

  it('gives a tenant idle for a minute no share, and forgets it', () => {
    let now = 0;
    const buckets = new TenantEventBuckets({ qps: 10, burst: 20 }, () => 1, () => now);
    taken(buckets, 'team-b', 1);
    now += 61_000;
    expect(taken(buckets, 'team-a', 100)).toBe(20);
    expect(buckets.tenants).toBe(1);
  });

  it('computes a share from weights, guarding nonsense weights', () => {
    expect(tenantShare(1, 4)).toBe(0.25);
    expect(tenantShare(Number.NaN, 2)).toBe(0.5);
    expect(tenantShare(5, 0)).toBe(1);
  });
});
