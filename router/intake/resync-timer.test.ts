// The resync timer: again and again at resyncMs ±10 %, each period drawn anew, and never once stopped.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startResync } from './resync-timer.ts';

describe('startResync', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('resyncs every period, each jittered within ±10 %, until stopped', () => {
    const draws = [0, 1, 0.5];
    let resyncs = 0;
    const stop = startResync(1000, () => (resyncs += 1), () => draws.shift() ?? 0.5);
    vi.advanceTimersByTime(899);
    expect(resyncs).toBe(0);
    vi.advanceTimersByTime(1);
    expect(resyncs).toBe(1);
    // The next period drew 1: 1,100 ms.
    vi.advanceTimersByTime(1099);
    expect(resyncs).toBe(1);
    vi.advanceTimersByTime(1);
    expect(resyncs).toBe(2);
    vi.advanceTimersByTime(1000);
    expect(resyncs).toBe(3);
    stop();
    vi.advanceTimersByTime(10_000);
    expect(resyncs).toBe(3);
  });
});
