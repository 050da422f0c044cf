// The memory of applies: the same configuration onto the object it produced is unchanged, nothing else is.
import { describe, expect, it } from 'vitest';
import { AppliedWrites, appliedWritesOf } from './applied-writes.ts';
import { parseLoop } from '../base/loop-spec.ts';

describe('AppliedWrites', () => {
  const a = AppliedWrites.digest({ data: { x: '1' } });
  const b = AppliedWrites.digest({ data: { x: '2' } });

  it('knows an apply as unchanged only for the same configuration and the version that apply produced', () => {
    const writes = new AppliedWrites();
    expect(writes.unchanged('k', a, '5')).toBe(false);
    writes.remember('k', a, '5');
    expect(writes.unchanged('k', a, '5')).toBe(true);
    expect(writes.unchanged('k', b, '5')).toBe(false);
    expect(writes.unchanged('k', a, '6')).toBe(false);
    expect(writes.unchanged('k', a, undefined)).toBe(false);
    expect(writes.unchanged('other', a, '5')).toBe(false);
  });

  it('forgets an object whose apply answered no version, and the least recently applied beyond its capacity', () => {
    const writes = new AppliedWrites(2);
    writes.remember('k1', a, '1');
    writes.remember('k2', a, '2');
    writes.remember('k1', a, '3');
    writes.remember('k3', a, '4');
    expect(writes.size).toBe(2);
    expect(writes.unchanged('k2', a, '2')).toBe(false);
    expect(writes.unchanged('k1', a, '3')).toBe(true);
    writes.remember('k1', a, undefined);
    expect(writes.unchanged('k1', a, '3')).toBe(false);
  });

  it('remembers nothing with capacity 0', () => {
    const writes = new AppliedWrites(0);
    writes.remember('k', a, '5');
    expect(writes.unchanged('k', a, '5')).toBe(false);
  });

  it('keeps one memory per Loop run', () => {
    const spec = { for: { apiVersion: 'v1', kind: 'ConfigMap' }, serviceAccount: { namespace: 'a', name: 'loop' }, function: { url: 'http://fn.a.svc/' } };
    const first = parseLoop({ metadata: { name: 'cm' }, spec });
    const again = parseLoop({ metadata: { name: 'cm' }, spec });
    expect(appliedWritesOf(first)).toBe(appliedWritesOf(first));
    expect(appliedWritesOf(again)).not.toBe(appliedWritesOf(first));
  });
});
