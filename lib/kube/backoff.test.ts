import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay, sleep } from './backoff.ts';

describe('backoffDelay', () => {
  it('doubles from the base delay and stops at the cap', () => {
    const policy = { baseMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(policy, n))).toEqual([100, 200, 400, 800, 1000]);
  });
  it('stays finite for huge attempt counts', () => {
    expect(backoffDelay({ baseMs: 5, maxMs: 1_000_000 }, 10_000)).toBe(1_000_000);
  });
  it('removes at most the jitter fraction of the delay', () => {
    const policy = { baseMs: 1000, maxMs: 1000, jitter: 0.2 };
    expect(backoffDelay(policy, 1, () => 0)).toBe(1000);
    expect(backoffDelay(policy, 1, () => 1)).toBe(800);
  });
});

describe('Backoff', () => {
  it('counts failures and starts over after reset', () => {
    const b = new Backoff({ baseMs: 10, maxMs: 100 });
    expect([b.next(), b.next(), b.next()]).toEqual([10, 20, 40]);
    b.reset();
    expect(b.next()).toBe(10);
  });
});

describe('sleep', () => {
  it('rejects with the abort reason when aborted', async () => {
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});
