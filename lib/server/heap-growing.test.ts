import { describe, expect, it } from 'vitest';
import { heapGrowingFlag } from './heap-growing.ts';

describe('heapGrowingFlag', () => {
  it('sets V8 --heap-growing-percent to the percent asked for', () => {
    expect(heapGrowingFlag(50, [])).toBe('--heap-growing-percent=50');
    expect(heapGrowingFlag(50, ['--max-semi-space-size=4', '--expose-gc'])).toBe('--heap-growing-percent=50');
  });
  it('leaves V8 its own factor at 0', () => {
    expect(heapGrowingFlag(0, [])).toBeUndefined();
  });
  it('lets a --heap-growing-percent on node\'s own command line win, in either spelling', () => {
    expect(heapGrowingFlag(50, ['--heap-growing-percent=20'])).toBeUndefined();
    expect(heapGrowingFlag(50, ['--heap_growing_percent', '20'])).toBeUndefined();
    expect(heapGrowingFlag(50, ['--heap-growing-percentage-of-nothing'])).toBe('--heap-growing-percent=50');
  });
});
