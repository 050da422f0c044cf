import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, lastFaultEndMs, planFaults } from './fault-plan.ts';
import { createPrng } from './prng.ts';

const options = { durationMs: 180_000, warmupMs: 20_000, meanGapMs: 20_000, functions: ['at', 'podset'] };

describe('createPrng', () => {
  it('gives the same sequence for the same seed and a different one for another seed', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, (() => { const r = createPrng(seed); return () => r.next(); })());
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
  });

  it('keeps int() within its bounds, both included', () => {
    const rng = createPrng(1);
    const seen = new Set(Array.from({ length: 500 }, () => rng.int(1, 10)));
    expect([...seen].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('forks streams that do not move when the parent draws more', () => {
    const a = createPrng(7);
    const b = createPrng(7);
    b.next();
    b.next();
    expect(a.fork('churn').next()).toBe(b.fork('churn').next());
    expect(a.fork('churn').next()).not.toBe(a.fork('faults').next());
  });
});

describe('planFaults', () => {
  it('is the same plan for the same seed', () => {
    expect(planFaults(createPrng(5), options)).toEqual(planFaults(createPrng(5), options));
  });

  it('injects every kind at least once, after the warm-up and before the end, in time order', () => {
    for (const seed of [1, 2, 3, 99]) {
      const plan = planFaults(createPrng(seed), options);
      expect(new Set(plan.map((f) => f.kind))).toEqual(new Set(FAULT_KINDS));
      expect(plan.every((f) => f.atMs >= options.warmupMs && f.atMs < options.durationMs)).toBe(true);
      expect(plan.map((f) => f.atMs)).toEqual([...plan.map((f) => f.atMs)].sort((a, b) => a - b));
    }
  });

  it('names a function for function faults and a misbehaviour for misbehaving ones', () => {
    const plan = planFaults(createPrng(11), { ...options, durationMs: 1_800_000 });
    for (const f of plan.filter((x) => x.kind === 'function-kill' || x.kind === 'function-misbehave')) expect(options.functions).toContain(f.target);
    for (const f of plan.filter((x) => x.kind === 'function-misbehave')) expect(['500', 'garbage', 'hang']).toContain(f.misbehaviour);
    expect(plan.filter((x) => x.kind === 'etcd-pause').every((f) => f.holdMs >= 2000 && f.holdMs <= 5000)).toBe(true);
  });

  it('adds faults with the run length at about one per mean gap', () => {
    const plan = planFaults(createPrng(3), { ...options, durationMs: 1_800_000 });
    // 8 guaranteed + ~89 Poisson arrivals over 29.7 min at one per 20 s.
    expect(plan.length).toBeGreaterThan(60);
    expect(plan.length).toBeLessThan(130);
  });

  it('refuses a run no longer than its warm-up', () => {
    expect(() => planFaults(createPrng(1), { ...options, durationMs: 10_000 })).toThrow(/longer than the warm-up/);
  });

  it('reports when the last fault ends', () => {
    expect(lastFaultEndMs([{ atMs: 100, kind: 'etcd-pause', holdMs: 3000 }, { atMs: 2000, kind: 'watch-cut', holdMs: 0 }])).toBe(3100);
  });
});
