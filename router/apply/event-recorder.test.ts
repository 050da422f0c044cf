import { describe, expect, it } from 'vitest';
import { EventDeduper } from './event-recorder.ts';

describe('EventDeduper', () => {
  it('skips an event written within the window, and one being written', () => {
    let now = 0;
    const d = new EventDeduper(1000, 100, () => now);
    expect(d.claim('a')).toBe(true);
    expect(d.claim('a')).toBe(false);
    d.written('a');
    expect(d.claim('a')).toBe(false);
    expect(d.claim('b')).toBe(true);
    now = 1000;
    expect(d.claim('a')).toBe(true);
  });

  it('deduplicates only after a successful write: a dropped or failed event is tried again', () => {
    const d = new EventDeduper(300_000, 100, () => 0);
    expect(d.claim('refused')).toBe(true);
    d.release('refused');
    expect(d.claim('refused')).toBe(true);
    d.written('refused');
    expect(d.claim('refused')).toBe(false);
    // A release after the write changes nothing.
    d.release('refused');
    expect(d.claim('refused')).toBe(false);
  });

  it('stays bounded by forgetting the oldest entries', () => {
    const d = new EventDeduper(1000, 2, () => 0);
    for (const key of ['a', 'b', 'c']) {
      d.claim(key);
      d.written(key);
    }
    expect(d.claim('a')).toBe(true);
    expect(d.claim('c')).toBe(false);
  });
});
