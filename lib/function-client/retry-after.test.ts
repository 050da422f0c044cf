import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after.ts';

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), { now: 4_000 })).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('-5')).toBe(0);
  });

  it('caps an unsigned 429 asking for weeks at the backoff maximum', () => {
    expect(parseRetryAfter(String(30 * 86_400))).toBe(60_000);
    expect(parseRetryAfter('1e308')).toBe(60_000);
    expect(parseRetryAfter(new Date(Date.UTC(2099, 0, 1)).toUTCString(), { now: 0 })).toBe(60_000);
    expect(parseRetryAfter('3600', { maxMs: 5000 })).toBe(5000);
  });
});
