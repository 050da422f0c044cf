import { describe, expect, it } from 'vitest';
import { metaTime, microTime, timestampOf } from './meta-time.ts';

describe('meta-time', () => {
  it('writes metav1.Time to the second, dropping the fraction', () => {
    expect(metaTime(new Date('2026-11-22T10:00:00.987Z'))).toBe('2026-11-22T10:00:00Z');
  });
  it('writes metav1.MicroTime with six fraction digits', () => {
    expect(microTime(new Date('2026-11-22T10:00:00.987Z'))).toBe('2026-11-22T10:00:00.987000Z');
  });
  it('reads a creationTimestamp whether the cache holds a string or a Date', () => {
    expect(timestampOf('2026-11-22T10:00:00Z')).toBe('2026-11-22T10:00:00Z');
    expect(timestampOf(new Date('2026-11-22T10:00:00Z'))).toBe('2026-11-22T10:00:00.000Z');
    expect(timestampOf(undefined)).toBeUndefined();
    expect(timestampOf(42)).toBeUndefined();
  });
});
