import { describe, expect, it } from 'vitest';
import { cloneJson } from './clone-json.ts';

describe('cloneJson', () => {
  it('copies nested objects and arrays so mutating the copy leaves the original alone', () => {
    const original = { metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'c', ports: [80] }] }, n: null };
    const copy = cloneJson(original);
    copy.metadata.labels.a = '2';
    copy.spec.containers[0]!.ports.push(443);
    expect(original).toEqual({ metadata: { labels: { a: '1' } }, spec: { containers: [{ name: 'c', ports: [80] }] }, n: null });
    expect(copy).toEqual({ metadata: { labels: { a: '2' } }, spec: { containers: [{ name: 'c', ports: [80, 443] }] }, n: null });
  });

  it('drops undefined members like JSON does and keeps a "__proto__" key as data', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const copy = cloneJson({ ...parsed, gone: undefined });
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it('copies own properties only, as JSON.stringify does', () => {
    const inherits = Object.create({ inherited: 'x' }) as Record<string, unknown>;
    inherits.own = { a: 1 };
    expect(cloneJson(inherits)).toStrictEqual({ own: { a: 1 } });
  });
});
