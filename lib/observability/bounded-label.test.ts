// The bounded label keeps a metric's series count fixed whatever values an open set (tenants) brings.
import { describe, expect, it } from 'vitest';
import { BoundedLabel } from './bounded-label.ts';

describe('BoundedLabel', () => {
  it('names the first values it sees and reports every later one as other, stably', () => {
    const label = new BoundedLabel(2);
    expect(['team-a', 'team-b', 'team-c', 'team-a', 'team-d', 'team-b'].map((v) => label.of(v))).toEqual(['team-a', 'team-b', 'other', 'team-a', 'other', 'team-b']);
  });
});
