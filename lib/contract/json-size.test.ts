// jsonByteSize against JSON.stringify's UTF-8 length, on hand-picked and generated values.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cachedJsonSize, jsonByteSize } from './json-size.ts';

const utf8 = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

describe('jsonByteSize', () => {
  it('is the UTF-8 length of JSON.stringify for escapes, multi-byte text, numbers and skipped members', () => {
    for (const value of [
      { a: 'x"y\\z\n\t\u0001', b: [1, -2.5, 1e21, true, false, null], c: {} },
      { text: 'é中😀', lone: '\ud800x', keys: { 'ü': 1 } },
      { gone: undefined, fn: () => 1, list: [undefined, () => 1], nan: Number.NaN },
      [],
      'plain',
    ]) {
      expect(jsonByteSize(value)).toBe(utf8(value));
    }
  });

  it('matches JSON.stringify on generated JSON values', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => jsonByteSize(value) === utf8(value)), { numRuns: 300, seed: 38 });
  });

  it('measures a cached object as jsonByteSize does, on generated JSON objects', () => {
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (object) => cachedJsonSize(object) === jsonByteSize(object)), { numRuns: 300, seed: 41 });
  });

  it('remembers a cached object size', () => {
    const object = { data: { big: 'x'.repeat(1000) } };
    expect(cachedJsonSize(object)).toBe(utf8(object));
    object.data.big = '';
    // Cached objects are never changed in place; the memo answers for the object as it was measured.
    expect(cachedJsonSize(object)).toBe(utf8({ data: { big: 'x'.repeat(1000) } }));
  });
});
