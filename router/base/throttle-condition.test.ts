import { describe, expect, it } from 'vitest';
import { throttledReason, throttleMessage, ThrottleTracker } from './throttle-condition.ts';

/** Feeds a tracker 10 s samples in which the Loop waited `callShare`/`apiShare` of each interval. */
function feed(tracker: ThrottleTracker, clock: { at: number; calls: number; api: number }, intervals: number, callShare: number, apiShare = 0) {
  const changes = [];
  for (let i = 0; i < intervals; i += 1) {
    clock.at += 10_000;
    clock.calls += 10_000 * callShare;
    clock.api += 10_000 * apiShare;
    const change = tracker.observe({ at: clock.at, callWaitMs: clock.calls, apiWaitMs: clock.api });
    if (change) changes.push(change);
  }
  return changes;
}

describe('ThrottleTracker', () => {
  it('sets Throttled once the Loop waited half the window, with the budget it waited for', () => {
    const tracker = new ThrottleTracker();
    const clock = { at: 0, calls: 0, api: 0 };
    tracker.observe({ at: 0, callWaitMs: 0, apiWaitMs: 0 });
    const changes = feed(tracker, clock, 6, 0.8);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ throttled: true, reason: 'CallShare' });
    expect(changes[0]!.fraction).toBeCloseTo(0.8);
  });

  it('does not call a short burst throttling: nothing is decided before half a window was seen', () => {
    const tracker = new ThrottleTracker();
    const clock = { at: 0, calls: 0, api: 0 };
    tracker.observe({ at: 0, callWaitMs: 0, apiWaitMs: 0 });
    expect(feed(tracker, clock, 2, 1)).toEqual([]);
  });

  it('does not flap: waiting between 10 % and 50 % keeps whichever state it is in', () => {
    const tracker = new ThrottleTracker();
    const clock = { at: 0, calls: 0, api: 0 };
    tracker.observe({ at: 0, callWaitMs: 0, apiWaitMs: 0 });
    expect(feed(tracker, clock, 6, 0.3)).toEqual([]);
    expect(tracker.state.throttled).toBe(false);
    feed(tracker, clock, 6, 0.9);
    expect(tracker.state.throttled).toBe(true);
    // Oscillating around the set threshold never clears it.
    for (let i = 0; i < 5; i += 1) {
      expect(feed(tracker, clock, 3, 0.2)).toEqual([]);
      expect(feed(tracker, clock, 3, 0.6)).toEqual([]);
    }
    const cleared = feed(tracker, clock, 8, 0);
    expect(cleared).toHaveLength(1);
    expect(cleared[0]).toMatchObject({ throttled: false });
  });

  it('names the API budget when requests, not calls, waited', () => {
    const tracker = new ThrottleTracker();
    const clock = { at: 0, calls: 0, api: 0 };
    tracker.observe({ at: 0, callWaitMs: 0, apiWaitMs: 0 });
    const [change] = feed(tracker, clock, 6, 0.1, 0.7);
    expect(change).toMatchObject({ throttled: true, reason: 'ApiBudget' });
    expect(throttleMessage(change!, { tenant: 'team-a', weight: 2, apiQps: 500 })).toBe("API requests waited 70% of the last 30s for tenant team-a's share (weight 2) of 500 requests/s shared by all Loops (--fair-api-qps), or for its own --loop-qps");
  });
});

describe('throttledReason', () => {
  it("reads a True Throttled condition's known reason, and nothing from a False one or an unknown reason", () => {
    expect(throttledReason([{ type: 'Ready', status: 'True' }, { type: 'Throttled', status: 'True', reason: 'ApiBudget' }])).toBe('ApiBudget');
    expect(throttledReason([{ type: 'Throttled', status: 'True', reason: 'CallShare' }])).toBe('CallShare');
    expect(throttledReason([{ type: 'Throttled', status: 'False', reason: 'CallShare' }])).toBeUndefined();
    expect(throttledReason([{ type: 'Throttled', status: 'True', reason: 'SomethingElse' }])).toBeUndefined();
    expect(throttledReason([])).toBeUndefined();
  });
});
