import { describe, expect, it } from 'vitest';
import { CLUSTER_TENANT } from '../../api/tenant.ts';
import { TenantSizes } from './tenant-sizes.ts';

const sizes = (entries: Array<[string, number]>) => {
  const s = new TenantSizes();
  for (const [tenant, size] of entries) s.set(tenant, size);
  return s;
};

describe('TenantSizes.largest', () => {
  it('names the tenant holding the most, the recording one when it holds as many as the largest', () => {
    expect(sizes([['a', 5], ['b', 2]]).largest('b')).toBe('a');
    expect(sizes([['a', 5], ['b', 5]]).largest('b')).toBe('b');
    expect(sizes([['a', 5], [CLUSTER_TENANT, 5]]).largest('c')).toBe('a');
    expect(new TenantSizes().largest('a')).toBeUndefined();
  });

  it('follows counts that grow and shrink one object at a time, as the recorder records and evicts', () => {
    const s = sizes([['a', 3], ['b', 2]]);
    s.set('a', 2);
    expect(s.largest('x')).toBe('b');
    s.set('b', 1);
    expect(s.largest('x')).toBe('a');
    s.set('a', 1);
    s.set('a', 0);
    s.set('b', 0);
    expect(s.largest('a')).toBeUndefined();
    s.set('c', 1);
    expect(s.largest('a')).toBe('c');
  });

  it('agrees with a scan of every tenant over random records and evictions', () => {
    const s = new TenantSizes();
    const counts = new Map<string, number>();
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    for (let i = 0; i < 5_000; i++) {
      const tenant = `t${next(12)}`;
      const size = Math.max(0, (counts.get(tenant) ?? 0) + (next(3) === 0 ? -1 : 1));
      counts.set(tenant, size);
      s.set(tenant, size);
      const most = Math.max(0, ...counts.values());
      const chosen = s.largest(tenant);
      if (most === 0) expect(chosen).toBeUndefined();
      else {
        expect(counts.get(chosen!)).toBe(most);
        if (counts.get(tenant) === most) expect(chosen).toBe(tenant);
      }
    }
  });
});
