import { describe, expect, it } from 'vitest';
import { mayStart, RequestByteBudget, tenantShare } from './request-byte-budget.ts';

/** Whether the promise has settled after the microtasks queued so far ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe('dividing the request bytes in flight by tenant', () => {
  it('gives each active tenant its weight part of the capacity', () => {
    expect(tenantShare(100, 1, 1)).toBe(100);
    expect(tenantShare(100, 1, 4)).toBe(25);
    expect(tenantShare(100, 3, 4)).toBe(75);
  });

  it('starts a request within the share and the capacity; one over the whole share only alone', () => {
    expect(mayStart(20, 0, 50, 0, 100)).toBe(true);
    expect(mayStart(20, 40, 50, 40, 100)).toBe(false);
    expect(mayStart(60, 0, 50, 30, 100)).toBe(true);
    expect(mayStart(60, 10, 50, 10, 100)).toBe(false);
    expect(mayStart(60, 0, 50, 50, 100)).toBe(false);
  });

  it('keeps a tenant over its share waiting while another tenant still gets its own share', async () => {
    const budget = new RequestByteBudget(100);
    const a1 = await budget.acquire('a', 40);
    const a2 = await budget.acquire('a', 40);
    expect(budget.tenantInFlight('a')).toBe(80);
    // Alone, a had the whole capacity (work-conserving). b arrives: shares are now 50 each, a is over its
    // share and waits; what is left stays for b.
    const b1 = budget.acquire('b', 20);
    expect(await settled(b1)).toBe(true);
    const a3 = budget.acquire('a', 10);
    expect(await settled(a3)).toBe(false);
    a1();
    // a at 40 (+10 = 50) fits its share again.
    expect(await settled(a3)).toBe(true);
    expect(budget.inFlight).toBe(70);
    a2();
    (await a3)();
    (await b1)();
    expect(budget.inFlight).toBe(0);
  });

  it('starts a tenant\'s waiters in order and forgets a tenant with nothing in flight', async () => {
    const budget = new RequestByteBudget(10);
    const first = await budget.acquire('a', 10);
    const order: number[] = [];
    const second = budget.acquire('a', 6).then((release) => (order.push(2), release));
    const third = budget.acquire('a', 4).then((release) => (order.push(3), release));
    first();
    (await second)();
    (await third)();
    expect(order).toEqual([2, 3]);
    expect(budget.tenantInFlight('a')).toBe(0);
  });

  it('holds a tenant at its share although the capacity has room, so the rest stays for the others', async () => {
    const budget = new RequestByteBudget(100);
    const a = await budget.acquire('a', 40);
    const b = await budget.acquire('b', 10);
    const over = budget.acquire('a', 20);
    expect(await settled(over)).toBe(false);
    expect(await settled(budget.acquire('b', 40))).toBe(true);
    a();
    expect(await settled(over)).toBe(true);
    b();
  });

  it('weighs tenants', async () => {
    const budget = new RequestByteBudget(100, (t) => (t === 'heavy' ? 3 : 1));
    const light = await budget.acquire('light', 25);
    const heavy = await budget.acquire('heavy', 75);
    expect(await settled(budget.acquire('light', 1))).toBe(false);
    light();
    heavy();
  });
});
