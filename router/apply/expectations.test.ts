import { describe, expect, it } from 'vitest';
import { Expectations } from './expectations.ts';

describe('Expectations', () => {
  it('holds an owner until every created child is in the cache', () => {
    const cache = new Map<string, { uid: string }>();
    const lookup = (kind: string, key: string) => cache.get(`${kind}|${key}`);
    const e = new Expectations(30_000);
    e.expectCreate('ns/ps', { kind: 'Pod.v1', key: 'ns/a' });
    e.expectCreate('ns/ps', { kind: 'Pod.v1', key: 'ns/b' });
    expect(e.satisfied('ns/ps', lookup)).toBe(false);
    cache.set('Pod.v1|ns/a', { uid: '1' });
    expect(e.satisfied('ns/ps', lookup)).toBe(false);
    cache.set('Pod.v1|ns/b', { uid: '2' });
    expect(e.satisfied('ns/ps', lookup)).toBe(true);
    expect(e.size).toBe(0);
  });
  it('holds an owner until deleted children leave the cache; a new object of the same name counts as gone', () => {
    const cache = new Map<string, { uid: string }>([['Pod.v1|ns/a', { uid: 'old' }]]);
    const lookup = (kind: string, key: string) => cache.get(`${kind}|${key}`);
    const e = new Expectations(30_000);
    e.expectDelete('ns/ps', { kind: 'Pod.v1', key: 'ns/a', uid: 'old' });
    expect(e.satisfied('ns/ps', lookup)).toBe(false);
    cache.set('Pod.v1|ns/a', { uid: 'new' });
    expect(e.satisfied('ns/ps', lookup)).toBe(true);
  });
  it('gives up after the timeout', () => {
    let now = 0;
    const e = new Expectations(1000, () => now);
    e.expectCreate('o', { kind: 'Pod.v1', key: 'ns/never' });
    expect(e.satisfied('o', () => undefined)).toBe(false);
    expect(e.remainingMs('o')).toBe(1000);
    now = 1000;
    expect(e.satisfied('o', () => undefined)).toBe(true);
  });
});
