import { describe, expect, it } from 'vitest';
import { overLimitMessage } from './tenant-loop-limit.ts';

// Which Loops are over the limit is lib/kube/oldest-per-namespace.ts's (its tests); this is the message.
describe('Loops per tenant', () => {
  it('says why, how many and when it starts', () => {
    expect(overLimitMessage('team-a', 50, { position: 52, total: 53 })).toBe(
      'namespace team-a has 53 Loops and the router runs at most 50 per namespace (--max-loops-per-tenant), the oldest first: this one is number 52, so it does not run; it starts once 2 older Loop(s) of team-a are deleted',
    );
  });
});
