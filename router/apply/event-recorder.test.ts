import { describe, expect, it } from 'vitest';
import { EventDeduper } from './event-recorder.ts';

describe('EventDeduper', () => {
  it('writes the same event once per window', () => {
    let now = 0;
    const d = new EventDeduper(1000, 100, () => now);
    expect(d.shouldWrite('a')).toBe(true);
    expect(d.shouldWrite('a')).toBe(false);
    expect(d.shouldWrite('b')).toBe(true);
    now = 1000;
    expect(d.shouldWrite('a')).toBe(true);
  });
  it('stays bounded by forgetting the oldest entries', () => {
    const d = new EventDeduper(1000, 2, () => 0);
    d.shouldWrite('a');
    d.shouldWrite('b');
    d.shouldWrite('c');
    expect(d.shouldWrite('a')).toBe(true);
    expect(d.shouldWrite('c')).toBe(false);
  });
});
