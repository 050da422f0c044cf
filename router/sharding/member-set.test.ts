import { describe, expect, it } from 'vitest';
import { MemberSet } from './member-set.ts';

const keys = Array.from({ length: 6000 }, (_, i) => `ns-${i % 7}/object-${i}`);
const share = (set: MemberSet) => {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(set.owner('loop', key)!, (counts.get(set.owner('loop', key)!) ?? 0) + 1);
  return counts;
};

describe('MemberSet', () => {
  it('agrees on the owner whatever order the members were seen in', () => {
    const a = new MemberSet(['router-a', 'router-b', 'router-c']);
    const b = new MemberSet(['router-c', 'router-a', 'router-b', 'router-a']);
    expect(b.id).toBe(a.id);
    for (const key of keys.slice(0, 500)) expect(b.owner('loop', key)).toBe(a.owner('loop', key));
  });

  it('spreads keys evenly over the members', () => {
    const counts = share(new MemberSet(['router-a', 'router-b', 'router-c']));
    for (const n of counts.values()) expect(n).toBeGreaterThan(6000 / 3 * 0.9);
    expect([...counts.values()].reduce((a, n) => a + n, 0)).toBe(6000);
  });

  it('moves only the leaving member\'s keys when a member leaves', () => {
    const before = new MemberSet(['router-a', 'router-b', 'router-c']);
    const after = new MemberSet(['router-a', 'router-c']);
    for (const key of keys) {
      const owner = before.owner('loop', key);
      if (owner !== 'router-b') expect(after.owner('loop', key)).toBe(owner);
    }
  });

  it('moves only the keys the joining member wins, about a quarter of them from three to four', () => {
    const before = new MemberSet(['router-a', 'router-b', 'router-c']);
    const after = new MemberSet(['router-a', 'router-b', 'router-c', 'router-d']);
    let moved = 0;
    for (const key of keys) {
      if (after.owner('loop', key) !== before.owner('loop', key)) {
        expect(after.owner('loop', key)).toBe('router-d');
        moved += 1;
      }
    }
    expect(moved / keys.length).toBeGreaterThan(0.2);
    expect(moved / keys.length).toBeLessThan(0.3);
  });

  it('assigns the same key of different Loops independently', () => {
    const set = new MemberSet(['router-a', 'router-b', 'router-c']);
    const differing = keys.filter((key) => set.owner('loop-1', key) !== set.owner('loop-2', key)).length;
    expect(differing / keys.length).toBeGreaterThan(0.5);
  });

  it('has no owner and a fixed id when empty, and different ids for different sets', () => {
    expect(MemberSet.EMPTY.owner('loop', 'ns/x')).toBeUndefined();
    expect(new MemberSet([]).id).toBe(MemberSet.EMPTY.id);
    expect(new MemberSet(['a', 'b']).id).not.toBe(new MemberSet(['a', 'bb']).id);
    expect(new MemberSet(['a', 'b']).id).toMatch(/^[0-9a-f]{16}$/);
  });
});
