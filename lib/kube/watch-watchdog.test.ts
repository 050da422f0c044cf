// A watch's timeout and its watchdog: the short timeout until the server has sent a bookmark, the long one after and
// for every WatchList (held to the short one for its end); the deadline past the timeout plus grace; silence counted
// only once told, and each thing heard starting it again; a WatchList's fill deadline, off once it is filled.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fillDeadlineMs, watchTimeoutSeconds, WatchWatchdog } from './watch-watchdog.ts';

describe('watchTimeoutSeconds', () => {
  it('asks for 300-600 s until a bookmark was heard, 1,800-3,600 s after and for a WatchList, its end due within 300-600 s', () => {
    expect([watchTimeoutSeconds({}, false, false, 0), watchTimeoutSeconds({}, false, false, 0.999)]).toEqual([300, 599]);
    expect([watchTimeoutSeconds({}, true, false, 0), watchTimeoutSeconds({}, true, false, 0.5)]).toEqual([1800, 2700]);
    // The first WatchList of an informer (nothing heard yet) and one after a relist alike.
    expect([watchTimeoutSeconds({}, false, true, 0), watchTimeoutSeconds({}, true, true, 0.999)]).toEqual([1800, 3598]);
    expect([fillDeadlineMs({}, 0), fillDeadlineMs({}, 0.5)]).toEqual([300_000, 450_000]);
  });

  it('takes each base from the options', () => {
    const timeouts = { watchTimeoutSeconds: 10, bookmarkedWatchTimeoutSeconds: 100 };
    expect([watchTimeoutSeconds(timeouts, false, false, 0.5), watchTimeoutSeconds(timeouts, true, false, 0.5), watchTimeoutSeconds(timeouts, false, true, 0.5)]).toEqual([15, 150, 150]);
    expect(fillDeadlineMs({ watchTimeoutSeconds: 0.02 }, 0.5)).toBe(30);
  });
});

describe('WatchWatchdog', () => {
  let dog: WatchWatchdog | undefined;
  let ended: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    ended = [];
  });
  afterEach(() => {
    dog?.stop();
    vi.useRealTimers();
  });
  const start = (timeoutSeconds: number, silenceMs?: number) => (dog = new WatchWatchdog({ watchdogGraceMs: 1000, watchSilenceMs: silenceMs }, timeoutSeconds, (m) => ended.push(m)));

  it('ends a watch still open past its timeout plus grace, whatever it hears, when silence is not counted', () => {
    const watchdog = start(10);
    for (let s = 0; s < 10; s++) {
      vi.advanceTimersByTime(1000);
      watchdog.heard();
    }
    vi.advanceTimersByTime(999);
    expect(ended).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ended).toEqual(['still open 10s after its timeout']);
  });

  it('ends a watch that hears nothing for the silence limit once counting, long before its timeout', () => {
    const watchdog = start(1800, 180_000);
    vi.advanceTimersByTime(600_000);
    expect(ended).toEqual([]);
    watchdog.countSilence();
    vi.advanceTimersByTime(179_999);
    expect(ended).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(ended).toEqual(['heard nothing for 180s, bookmarks included']);
  });

  it('starts the silence again at each thing heard, and counting twice is counting once', () => {
    const watchdog = start(1800, 180_000);
    watchdog.countSilence();
    for (let minute = 0; minute < 20; minute++) {
      vi.advanceTimersByTime(60_000);
      watchdog.heard();
      watchdog.countSilence();
    }
    expect(ended).toEqual([]);
    vi.advanceTimersByTime(180_000);
    expect(ended).toEqual(['heard nothing for 180s, bookmarks included']);
  });

  it("tells a WatchList it is late when its initial state is not complete by its fill deadline, not once it is", () => {
    const late: string[] = [];
    const unfilled = start(1800, 180_000);
    unfilled.expectFill(300_000, () => late.push('unfilled'));
    const filled = new WatchWatchdog({}, 1800, (m) => ended.push(m));
    filled.expectFill(300_000, () => late.push('filled'));
    vi.advanceTimersByTime(299_999);
    filled.filled();
    expect(late).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(late).toEqual(['unfilled']);
    vi.advanceTimersByTime(600_000);
    filled.stop();
    // Late is not silent: the fill deadline ends nothing through `end`.
    expect([late, ended]).toEqual([['unfilled'], []]);
  });

  it('ends nothing once stopped', () => {
    const watchdog = start(1, 1000);
    const late: string[] = [];
    watchdog.expectFill(500, () => late.push('late'));
    watchdog.countSilence();
    watchdog.stop();
    vi.advanceTimersByTime(10_000);
    expect([ended, late]).toEqual([[], []]);
  });
});
