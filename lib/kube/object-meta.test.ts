import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { controllerReference, controllerUid, jsonEqual, jsonEqualExcept, objectKey, pointerEscape, refersTo } from './object-meta.ts';

const owner = { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'web', namespace: 'a', uid: 'u-1' } };

describe('object metadata helpers', () => {
  it('keys namespaced objects as namespace/name and cluster-scoped ones by name', () => {
    expect(objectKey({ namespace: 'a', name: 'b' })).toBe('a/b');
    expect(objectKey({ name: 'node-1' })).toBe('node-1');
  });

  it('finds the controller among several ownerReferences', () => {
    const child = { metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'other' }, { ...controllerReference(owner) }] } };
    expect(controllerUid(child)).toBe('u-1');
    expect(controllerUid({ metadata: {} })).toBeUndefined();
    expect(controllerReference(owner)).toEqual({ apiVersion: owner.apiVersion, kind: 'PodSet', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: true });
  });

  it('tells a reference to the object itself from one to a namesake of another kind or namespace', () => {
    expect(refersTo({ apiVersion: owner.apiVersion, kind: 'PodSet', namespace: 'a', name: 'web' }, owner)).toBe(true);
    expect(refersTo({ apiVersion: owner.apiVersion, kind: 'PodSet', namespace: 'b', name: 'web' }, owner)).toBe(false);
    expect(refersTo({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'web' }, owner)).toBe(false);
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } };
    expect(refersTo({ apiVersion: 'v1', kind: 'Node', namespace: null, name: 'n' }, node)).toBe(true);
  });

  it('escapes label keys for JSON pointers', () => {
    expect(pointerEscape('kubeloop.dev/pod-name')).toBe('kubeloop.dev~1pod-name');
    expect(pointerEscape('a~b')).toBe('a~0b');
  });

  it('compares JSON values whatever their key order', () => {
    expect(jsonEqual({ a: 1, b: [1, { c: 2, d: 3 }] }, { b: [1, { d: 3, c: 2 }], a: 1 })).toBe(true);
    expect(jsonEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: null })).toBe(false);
    expect(jsonEqual({ a: null }, { b: null })).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
  });

  it('compares as JSON sends: an undefined member is absent, an undefined value reads as null', () => {
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: null }, {})).toBe(false);
    expect(jsonEqual([undefined], [null])).toBe(true);
    expect(jsonEqual(undefined, null)).toBe(true);
    expect(jsonEqual(undefined, {})).toBe(false);
  });

  it('compares own members only, as JSON.stringify sends them', () => {
    const inherited = Object.assign(Object.create({ extra: 1 }) as Record<string, unknown>, { a: 1 });
    expect(JSON.stringify(inherited)).toBe('{"a":1}');
    expect(jsonEqual(inherited, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, inherited)).toBe(true);
    expect(jsonEqual(inherited, { a: 1, extra: 1 })).toBe(false);
    expect(jsonEqualExcept({ a: 1, skipped: 2 }, inherited, ['skipped'])).toBe(true);
  });
});

describe('jsonEqualExcept', () => {
  it('agrees with jsonEqual of copies without the keys, on generated objects', () => {
    const keys = ['resourceVersion', 'managedFields'];
    const without = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
    const member = fc.oneof(fc.constantFrom('resourceVersion', 'managedFields', 'name', 'labels'), fc.string());
    const object = fc.dictionary(member, fc.oneof(fc.jsonValue(), fc.constant(undefined)));
    fc.assert(
      fc.property(object, object, fc.boolean(), (a, b, same) => {
        const right = same ? { ...a, resourceVersion: b.resourceVersion } : b;
        return jsonEqualExcept(a, right, keys) === jsonEqual(without(a), without(right));
      }),
      { numRuns: 500, seed: 37 },
    );
  });
});
