import { describe, expect, it } from 'vitest';
import { TokenBucket } from './rate-limiter.ts';

describe('TokenBucket', () => {
  it('allows a burst and then refills at qps', () => {
    let now = 0;
    const bucket = new TokenBucket({ qps: 10, burst: 3 }, () => now);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([0, 0, 0]);
    expect(bucket.tryTake()).toBe(100);
    now += 100;
    expect(bucket.tryTake()).toBe(0);
  });
  it('never limits when qps is 0', () => {
    const bucket = new TokenBucket({ qps: 0, burst: 0 });
    for (let i = 0; i < 1000; i++) expect(bucket.tryTake()).toBe(0);
  });
  it('serves waiters in order once tokens come back', async () => {
    const bucket = new TokenBucket({ qps: 1000, burst: 1 });
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((n) => bucket.take().then(() => order.push(n))));
    expect(order).toEqual([1, 2, 3]);
  });
});
