import { describe, expect, it } from 'vitest';
import { RequestByteBudget } from './request-byte-budget.ts';

describe('the in-flight request byte budget', () => {
  it('lets a lone tenant borrow the whole budget but keeps the guarantee of every other tenant', () => {
    const budget = new RequestByteBudget(1000);
    budget.setTenants(4);
    expect(budget.share).toBe(250);
    // Team a may borrow past its 250 only what the three other guarantees leave: 1000 - 3 * 250.
    expect(budget.tryAcquire('a', 200).ok).toBe(true);
    expect(budget.tryAcquire('a', 50).ok).toBe(true);
    expect(budget.held('a')).toBe(250);
    const over = budget.tryAcquire('a', 1);
    expect(over).toMatchObject({ ok: false, message: expect.stringContaining('over its share') });
    // Every other tenant still gets its whole share.
    for (const tenant of ['b', 'c', 'd']) expect(budget.tryAcquire(tenant, 250).ok).toBe(true);
  });

  it('lends unreserved bytes when there are fewer tenants holding than the budget was divided for', () => {
    const budget = new RequestByteBudget(1000);
    budget.setTenants(2);
    expect(budget.tryAcquire('a', 400).ok).toBe(true);
    expect(budget.tryAcquire('a', 100).ok).toBe(true);
    expect(budget.tryAcquire('a', 1).ok).toBe(false);
    // Team b holds its 500 guarantee; once it holds less, nothing of it is lent to a.
    expect(budget.tryAcquire('b', 500).ok).toBe(true);
    budget.release('a', 300);
    expect(budget.tryAcquire('a', 300).ok).toBe(true);
    expect(budget.tryAcquire('a', 1).ok).toBe(false);
  });

  it('never lets the tenants together hold more than the budget, whatever the order of requests', () => {
    const budget = new RequestByteBudget(10_000);
    budget.setTenants(3);
    const held = new Map<string, number[]>();
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let step = 0; step < 5000; step += 1) {
      const tenant = ['a', 'b', 'c'][Math.floor(random() * 3)]!;
      const mine = held.get(tenant) ?? [];
      if (mine.length > 0 && random() < 0.4) {
        budget.release(tenant, mine.pop()!);
      } else {
        const bytes = 1 + Math.floor(random() * 3000);
        if (budget.tryAcquire(tenant, bytes).ok) mine.push(bytes);
      }
      held.set(tenant, mine);
      const total = ['a', 'b', 'c'].reduce((sum, t) => sum + budget.held(t), 0);
      expect(total).toBeLessThanOrEqual(10_000);
      // A tenant at or under its guarantee can always take up to it.
      for (const t of ['a', 'b', 'c']) expect(Math.max(budget.held(t), budget.share) + ['a', 'b', 'c'].filter((o) => o !== t).reduce((sum, o) => sum + Math.max(budget.held(o), budget.share), 0)).toBeLessThanOrEqual(10_000);
    }
  });
});
