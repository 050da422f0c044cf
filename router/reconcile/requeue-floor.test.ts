import { describe, expect, it } from 'vitest';
import { flooredDelayMs } from './requeue-floor.ts';

describe('flooredDelayMs', () => {
  it('raises 0 and small delays to the floor and keeps longer ones', () => {
    expect(flooredDelayMs(0, 1000)).toBe(1000);
    expect(flooredDelayMs(999, 1000)).toBe(1000);
    expect(flooredDelayMs(30_000, 1000)).toBe(30_000);
  });
  it('treats a delay that is not a finite number as the floor', () => {
    expect(flooredDelayMs(Number.NaN, 1000)).toBe(1000);
    expect(flooredDelayMs(-5, 250)).toBe(250);
  });
});
