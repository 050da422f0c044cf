import { describe, expect, it } from 'vitest';
import { MemberSet } from './member-set.ts';
import { SLOTS, shardSlot, shardSelector } from '../../lib/kube/shard-selector.ts';

/** Slots of 6,000 uids: ownership goes by the slot of a primary's uid. */
const keys = Array.from({ length: 6000 }, (_, i) => shardSlot(`0b8e${i.toString(16).padStart(4, '0')}-5f3c-4c2e-9d1a-${String(i * 7919).padStart(12, '0')}`));
const share = (set: MemberSet) => {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(set.owner(key)!, (counts.get(set.owner(key)!) ?? 0) + 1);
  return counts;
};

describe('MemberSet', () => {
  it('agrees on the owner whatever order the members were seen in', () => {
    const a = new MemberSet(['router-a', 'router-b', 'router-c']);
    const b = new MemberSet(['router-c', 'router-a', 'router-b', 'router-a']);
    expect(b.id).toBe(a.id);
    for (const key of keys.slice(0, 500)) expect(b.owner(key)).toBe(a.owner(key));
  });

  it('spreads keys evenly over the members', () => {
    const counts = share(new MemberSet(['router-a', 'router-b', 'router-c']));
    // 256 slots by rendezvous: within about a fifth of an even third (docs/sharding.md).
    for (const n of counts.values()) expect(n).toBeGreaterThan(6000 / 3 * 0.8);
    expect([...counts.values()].reduce((a, n) => a + n, 0)).toBe(6000);
  });

  it('moves only the leaving member\'s keys when a member leaves', () => {
    const before = new MemberSet(['router-a', 'router-b', 'router-c']);
    const after = new MemberSet(['router-a', 'router-c']);
    for (const key of keys) {
      const owner = before.owner(key);
      if (owner !== 'router-b') expect(after.owner(key)).toBe(owner);
    }
  });

  it('moves only the keys the joining member wins, about a quarter of them from three to four', () => {
    const before = new MemberSet(['router-a', 'router-b', 'router-c']);
    const after = new MemberSet(['router-a', 'router-b', 'router-c', 'router-d']);
    let moved = 0;
    for (const key of keys) {
      if (after.owner(key) !== before.owner(key)) {
        expect(after.owner(key)).toBe('router-d');
        moved += 1;
      }
    }
    // A quarter of 256 slots, give or take the spread of rendezvous over so few.
    expect(moved / keys.length).toBeGreaterThan(0.15);
    expect(moved / keys.length).toBeLessThan(0.35);
  });

  it('gives every slot to exactly one member, as hash ranges the API server can select', () => {
    const set = new MemberSet(['router-a', 'router-b', 'router-c']);
    const slots = set.members.flatMap((m) => set.slotsOf(m));
    expect(slots.sort((a, b) => a - b)).toEqual(Array.from({ length: SLOTS }, (_, i) => i));
    for (const m of set.members) expect(set.slotsOf(m).every((slot) => set.owner(slot) === m)).toBe(true);
    const selector = shardSelector('object.metadata.uid', set.slotsOf('router-a'))!;
    expect(selector).toMatch(/^shardRange\(object\.metadata\.uid, '0x[0-9a-f]{16}', '0x[0-9a-f]{16,17}'\)( \|\| shardRange\(.*\))*$/);
    expect(set.slotsOf('router-z')).toEqual([]);
  });

  it('has no owner and a fixed id when empty, and different ids for different sets', () => {
    expect(MemberSet.EMPTY.owner(7)).toBeUndefined();
    expect(new MemberSet([]).id).toBe(MemberSet.EMPTY.id);
    expect(new MemberSet(['a', 'b']).id).not.toBe(new MemberSet(['a', 'bb']).id);
    expect(new MemberSet(['a', 'b']).id).toMatch(/^[0-9a-f]{16}$/);
  });
});
