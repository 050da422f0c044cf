import { describe, expect, it } from 'vitest';
import { inCanaryShare, shareBucket, SHARE_BUCKETS } from './canary-share.ts';
import { budgetSpent, CANARY_MIN_CALLS, ErrorBudget } from './error-budget.ts';
import { DivergenceTracker } from './shadow-divergence.ts';

const keys = Array.from({ length: 5000 }, (_, i) => `ns/pod-${i}`);

describe('canary share', () => {
  it('puts the same key in the same bucket every time, within range', () => {
    for (const key of keys.slice(0, 50)) {
      expect(shareBucket(key)).toBe(shareBucket(key));
      expect(shareBucket(key)).toBeGreaterThanOrEqual(0);
      expect(shareBucket(key)).toBeLessThan(SHARE_BUCKETS);
    }
  });
  it('takes about the weight of the keys, none at 0 % and all at 100 %', () => {
    const share = keys.filter((k) => inCanaryShare(k, 20)).length / keys.length;
    expect(share).toBeGreaterThan(0.17);
    expect(share).toBeLessThan(0.23);
    expect(keys.some((k) => inCanaryShare(k, 0))).toBe(false);
    expect(keys.every((k) => inCanaryShare(k, 100))).toBe(true);
  });
  it('only adds keys when the weight grows', () => {
    for (const key of keys.filter((k) => inCanaryShare(k, 10))) expect(inCanaryShare(key, 30)).toBe(true);
  });
});

describe('error budget', () => {
  it('is spent by more than maxErrors failures in the window', () => {
    expect(budgetSpent({ maxErrors: 2, windowMs: 60_000 }, 3, 2)).toBe(false);
    expect(budgetSpent({ maxErrors: 2, windowMs: 60_000 }, 3, 3)).toBe(true);
    expect(budgetSpent({ maxErrors: 0, windowMs: 60_000 }, 1, 1)).toBe(true);
  });
  it('judges a ratio only over enough calls', () => {
    const limits = { ratio: 0.1, windowMs: 60_000 };
    expect(budgetSpent(limits, CANARY_MIN_CALLS - 1, CANARY_MIN_CALLS - 1)).toBe(false);
    expect(budgetSpent(limits, CANARY_MIN_CALLS, 1)).toBe(false);
    expect(budgetSpent(limits, CANARY_MIN_CALLS, 2)).toBe(true);
  });
  it('forgets failures older than the window', () => {
    const budget = new ErrorBudget({ maxErrors: 1, windowMs: 10_000 });
    expect(budget.record(true, 1_000).spent).toBe(false);
    // The first failure left the window: two in ten seconds never happened.
    expect(budget.record(true, 12_500).spent).toBe(false);
    expect(budget.state(12_500)).toMatchObject({ calls: 1, errors: 1 });
    expect(budget.record(true, 13_000).spent).toBe(true);
    expect(budget.record(false, 13_100)).toMatchObject({ calls: 3, errors: 2, spent: true });
    expect(budget.state(40_000)).toEqual({ calls: 0, errors: 0, spent: false });
  });
});

describe('shadow divergence', () => {
  it('turns True on the first divergence and clears only after agreeing for the quiet time', () => {
    const t = new DivergenceTracker({ quietMs: 60_000, refreshMs: 10_000 });
    expect(t.agreed(0)).toBeUndefined();
    expect(t.divergedOn('Pod a/b', '/x', 1_000)).toMatchObject({ status: 'True', reason: 'Diverged' });
    expect(t.agreed(30_000)).toBeUndefined();
    expect(t.divergedOn('Pod a/c', '/y', 40_000)?.message).toContain('Pod a/c');
    expect(t.agreed(90_000)).toBeUndefined();
    expect(t.agreed(100_001)).toMatchObject({ status: 'False', reason: 'Agrees' });
    expect(t.diverged).toBe(false);
  });
  it('names a newer diverging object at most once per refresh interval', () => {
    const t = new DivergenceTracker({ refreshMs: 10_000 });
    expect(t.divergedOn('Pod a/b', '/x', 0)).toBeDefined();
    expect(t.divergedOn('Pod a/b', '/x', 20_000)).toBeUndefined();
    expect(t.divergedOn('Pod a/c', '/x', 5_000)).toBeUndefined();
    expect(t.divergedOn('Pod a/c', '/x', 20_000)?.message).toContain('Pod a/c: /x');
  });
});
