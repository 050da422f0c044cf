import { describe, expect, it } from 'vitest';
import { parseSchedule, secondsUntil } from './schedule.ts';

describe('parseSchedule', () => {
  it.each([
    ['2020-11-16T10:12:00Z', Date.UTC(2020, 10, 16, 10, 12, 0)],
    ['2026-11-22T10:00:05.250Z', Date.UTC(2026, 10, 22, 10, 0, 5, 250)],
    ['2024-02-29T23:59:59Z', Date.UTC(2024, 1, 29, 23, 59, 59)],
  ])('parses %s', (schedule, millis) => {
    expect(parseSchedule(schedule)).toBe(millis);
  });

  it.each([
    'tomorrow',
    '2020-11-16 10:12:00Z',
    '2020-11-16T10:12:00',
    '2020-11-16T10:12:00+01:00',
    '2020-11-16t10:12:00z',
    '2023-02-29T10:00:00Z',
    '2020-13-01T10:00:00Z',
    '2020-11-16T24:00:00Z',
    '2020-11-16T10:60:00Z',
    '',
    42,
    undefined,
  ])('refuses %j', (schedule) => {
    expect(parseSchedule(schedule)).toBeUndefined();
  });
});

describe('secondsUntil', () => {
  it('rounds up and never returns less than 1', () => {
    expect(secondsUntil(10_000, 0)).toBe(10);
    expect(secondsUntil(10_001, 0)).toBe(11);
    expect(secondsUntil(1, 0)).toBe(1);
    expect(secondsUntil(0, 0)).toBe(1);
  });
});
