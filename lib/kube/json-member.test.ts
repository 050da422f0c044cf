import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memberText } from './json-member.ts';

describe('memberText', () => {
  it('finds a nested member past strings, escapes and containers that look like keys', () => {
    const text = ' { "type" : "ADDED", "object": {"spec": {"x": "\\"metadata\\": {", "y": [{"metadata": 1}, "}"]}, "metadata" : {"name": "a\\"b", "n": [1, 2]}, "z": 3}}';
    expect(JSON.parse(memberText(text, ['object', 'metadata'])!)).toEqual({ name: 'a"b', n: [1, 2] });
    expect(memberText(text, ['type'])).toBe('"ADDED"');
    expect(memberText(text, ['object', 'z'])).toBe('3');
  });

  it('is undefined where the member is missing or the text is not an object there', () => {
    expect(memberText('{"object": {"spec": {}}}', ['object', 'metadata'])).toBeUndefined();
    expect(memberText('{"object": [1]}', ['object', 'metadata'])).toBeUndefined();
    expect(memberText('not json', ['object'])).toBeUndefined();
    expect(memberText('{"object": ', ['object'])).toBeUndefined();
  });

  it('agrees with JSON.parse on generated documents', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.jsonValue(), (rest, metadata) => {
        const text = JSON.stringify({ ...rest, object: { ...rest, metadata } });
        const parsed = JSON.parse(text) as { object: { metadata: unknown } };
        return JSON.stringify(JSON.parse(memberText(text, ['object', 'metadata'])!)) === JSON.stringify(parsed.object.metadata);
      }),
      { numRuns: 300, seed: 38 },
    );
  });
});
