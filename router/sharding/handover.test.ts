import { describe, expect, it } from 'vitest';
import { canAcknowledge, canAdopt, gained, mayStart, NO_SHARE, type HandoverState } from './handover.ts';
import { MemberSet } from './member-set.ts';
import { SLOTS } from '../../lib/kube/shard-selector.ts';

const two = new MemberSet(['a', 'b']);
const three = new MemberSet(['a', 'b', 'c']);
/** Ownership is by slot: every slot of the hash space. */
const keys = Array.from({ length: SLOTS }, (_, i) => i);
/** A slot owned by `first` in two and by `second` in three. */
const keyMoving = (first: string, second: string) => keys.find((k) => two.owner(k) === first && three.owner(k) === second)!;

describe('handover rules', () => {
  it('a member that has adopted nothing starts nothing', () => {
    expect(keys.some((k) => mayStart(NO_SHARE, 'a', k))).toBe(false);
    expect(keys.some((k) => mayStart({ adopted: MemberSet.EMPTY, target: three }, 'a', k))).toBe(false);
  });

  it('stops a key it gives away at once and starts a key it gains only after adopting', () => {
    const moving = { adopted: two, target: three };
    const givenAway = keyMoving('a', 'c');
    expect(mayStart({ adopted: two, target: two }, 'a', givenAway)).toBe(true);
    expect(mayStart(moving, 'a', givenAway)).toBe(false);
    expect(mayStart(moving, 'c', givenAway)).toBe(false);
    expect(mayStart({ adopted: three, target: three }, 'c', givenAway)).toBe(true);
    const kept = keyMoving('a', 'a');
    expect(mayStart(moving, 'a', kept)).toBe(true);
  });

  it('never lets two members start the same key, whatever views each holds', () => {
    const states: HandoverState[] = [NO_SHARE, { adopted: two, target: two }, { adopted: two, target: three }, { adopted: three, target: three }, { adopted: three, target: two }];
    // Views differing by one member never move a key between two others (rendezvous), and a view is
    // adopted only once every member acknowledged it: a key has one starter at a time.
    for (const key of keys) {
      for (const sa of states) {
        for (const sb of states) {
          if (mayStart(sa, 'a', key) && mayStart(sb, 'b', key)) throw new Error(`${key} started by a and b`);
        }
      }
    }
  });

  it('acknowledges only once nothing in flight belongs to another member of the target', () => {
    const moving = { adopted: two, target: three };
    const givenAway = keyMoving('a', 'c');
    const kept = keyMoving('a', 'a');
    expect(canAcknowledge(moving, 'a', [{ loop: 'l', key: 'ns/x', slot: givenAway }])).toBe(false);
    expect(canAcknowledge(moving, 'a', [{ loop: 'l', key: 'ns/y', slot: kept }])).toBe(true);
    expect(canAcknowledge(moving, 'a', [])).toBe(true);
    expect(canAcknowledge({ adopted: two, target: two }, 'c', [])).toBe(false);
  });

  it('adopts a view only when every member acknowledged that same view', () => {
    expect(canAdopt(three, 'a', new Map([['a', three.id], ['b', three.id]]))).toBe(false);
    expect(canAdopt(three, 'a', new Map([['a', three.id], ['b', two.id], ['c', three.id]]))).toBe(false);
    expect(canAdopt(three, 'a', new Map([['a', three.id], ['b', three.id], ['c', three.id]]))).toBe(true);
    expect(canAdopt(two, 'c', new Map([['a', two.id], ['b', two.id]]))).toBe(false);
  });

  it('hands over exactly the keys that may start now and could not before', () => {
    const before = { adopted: two, target: three };
    const after = { adopted: three, target: three };
    const newlyStarted = keys.filter((k) => gained(before, after, 'c')(k));
    expect(newlyStarted).toEqual(keys.filter((k) => three.owner(k) === 'c'));
    // A key a member was giving away and keeps after all (the target changed back) is queued again.
    const back = keyMoving('a', 'c');
    expect(gained(before, { adopted: two, target: two }, 'a')(back)).toBe(true);
    expect(keys.some((k) => gained(after, NO_SHARE, 'a')(k))).toBe(false);
  });
});
