import { describe, expect, it } from 'vitest';
import { startWaiting, stopWaiting, waitedMs, type WaitClock } from './wait-clock.ts';

describe('WaitClock', () => {
  it('counts the wait under way, then keeps it once it ends', () => {
    const clock: WaitClock = { throttledMs: 0, waitingSince: undefined };
    expect(waitedMs(clock, 100)).toBe(0);
    startWaiting(clock, 100);
    expect(waitedMs(clock, 130)).toBe(30);
    stopWaiting(clock, 150);
    expect(waitedMs(clock, 500)).toBe(50);
  });

  it('keeps the first start of a wait, and an end without a wait changes nothing', () => {
    const clock: WaitClock = { throttledMs: 20, waitingSince: undefined };
    stopWaiting(clock, 40);
    expect(clock).toEqual({ throttledMs: 20, waitingSince: undefined });
    startWaiting(clock, 50);
    startWaiting(clock, 70);
    stopWaiting(clock, 90);
    expect(waitedMs(clock, 90)).toBe(60);
  });
});
