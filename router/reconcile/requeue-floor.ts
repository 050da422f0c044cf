// The floor on delays a function (or its server) asks for: requeueAfterSeconds, retryAfterSeconds and
// Retry-After of 0 would otherwise re-run a key as fast as the router can call, spinning router and API server.

/** The default floor: one call per key per second at most, from the function's own requests. */
export const DEFAULT_MIN_REQUEUE_MS = 1000;

/** The delay to wait: the one asked for, never below the floor (a non-number counts as 0). */
export function flooredDelayMs(requestedMs: number, floorMs: number): number {
  return Number.isFinite(requestedMs) ? Math.max(requestedMs, floorMs) : floorMs;
}
