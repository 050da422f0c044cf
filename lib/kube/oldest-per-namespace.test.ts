import { describe, expect, it } from 'vitest';
import { beyondOldestPerNamespace, type NamespacedAge } from './oldest-per-namespace.ts';

const loop = (namespace: string, name: string, created: string): NamespacedAge => ({ id: `${namespace}/${name}`, namespace, created });

describe('beyondOldestPerNamespace', () => {
  it('runs the oldest N of each namespace and holds back the rest, per namespace', () => {
    const loops = [
      loop('team-a', 'd', '2026-11-28T10:00:04Z'),
      loop('team-a', 'a', '2026-11-28T10:00:01Z'),
      loop('team-a', 'c', '2026-11-28T10:00:03Z'),
      loop('team-a', 'b', '2026-11-28T10:00:02Z'),
      loop('team-b', 'x', '2026-11-28T10:00:09Z'),
      loop('team-b', 'y', '2026-11-28T10:00:10Z'),
    ];
    expect(beyondOldestPerNamespace(loops, 2)).toEqual(
      new Map([
        ['team-a/c', { position: 3, total: 4 }],
        ['team-a/d', { position: 4, total: 4 }],
      ]),
    );
    expect(beyondOldestPerNamespace(loops, 4).size).toBe(0);
    expect(beyondOldestPerNamespace(loops, 0).size).toBe(0);
  });

  it('breaks a tie of creation seconds by name, the same on every replica', () => {
    const same = '2026-11-28T10:00:00Z';
    const loops = [loop('t', 'zeta', same), loop('t', 'alpha', same), loop('t', 'mid', same)];
    expect([...beyondOldestPerNamespace(loops, 1).keys()]).toEqual(['t/mid', 't/zeta']);
    expect([...beyondOldestPerNamespace([...loops].reverse(), 1).keys()]).toEqual(['t/mid', 't/zeta']);
  });

  it('starts the next oldest when an older one goes', () => {
    const loops = [loop('t', 'a', '2026-01-01T00:00:01Z'), loop('t', 'b', '2026-01-01T00:00:02Z'), loop('t', 'c', '2026-01-01T00:00:03Z')];
    expect([...beyondOldestPerNamespace(loops, 2).keys()]).toEqual(['t/c']);
    expect(beyondOldestPerNamespace(loops.filter((l) => l.id !== 't/a'), 2).size).toBe(0);
  });

  it('counts no cluster-scoped object and sorts a missing creation time first', () => {
    const objects = [loop('t', 'b', '2026-01-01T00:00:02Z'), { id: 't/a', namespace: 't', created: undefined }, { id: 'c', namespace: undefined, created: '2026-01-01T00:00:00Z' }];
    expect([...beyondOldestPerNamespace(objects, 1).keys()]).toEqual(['t/b']);
  });
});
