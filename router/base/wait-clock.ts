// A counter of time spent waiting (the fair scheduler's flows and tenants, the API budget's tenants): what the
// Throttled condition and the fairness metrics read. Pure: the clock is given.

/** Milliseconds waited over its life, and when the wait under way began (undefined while not waiting). */
export interface WaitClock {
  throttledMs: number;
  waitingSince: number | undefined;
}

/** Time waited so far, the wait under way included. */
export function waitedMs(clock: WaitClock, now: number): number {
  return clock.throttledMs + (clock.waitingSince === undefined ? 0 : now - clock.waitingSince);
}

/** A wait begins, unless one is already under way. */
export function startWaiting(clock: WaitClock, now: number): void {
  clock.waitingSince ??= now;
}

/** The wait under way, if any, ends: its time is added to the counter. */
export function stopWaiting(clock: WaitClock, now: number): void {
  if (clock.waitingSince === undefined) return;
  clock.throttledMs += now - clock.waitingSince;
  clock.waitingSince = undefined;
}
