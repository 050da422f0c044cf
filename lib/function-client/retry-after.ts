// A 429's Retry-After, capped: the header comes from whoever answers at the function's address, signed or
// not, so it may delay a key by at most what the caller's own backoff would (never park it for weeks).

/** The router's backoff maximum (router/base/work-queue.ts DEFAULT_QUEUE_BACKOFF.maxMs). */
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

/** Milliseconds to wait, from delta-seconds or an HTTP date, at most `maxMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, options: { now?: number; maxMs?: number } = {}): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const maxMs = options.maxMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.min(maxMs, Math.max(0, seconds * 1000));
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.min(maxMs, Math.max(0, date - (options.now ?? Date.now())));
}
