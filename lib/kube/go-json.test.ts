import { describe, expect, it } from 'vitest';
import { goJsonStringify } from './go-json.ts';

describe('goJsonStringify', () => {
  it('escapes what Go escapes and JSON.stringify does not, and stays the same JSON value', () => {
    const value = { op: 'test', path: '/metadata/annotations', value: { note: 'a&b <c> d\u2028e\u2029f', plain: 'été/"q"\n' } };
    const text = goJsonStringify(value);
    expect(text).toBe('{"op":"test","path":"/metadata/annotations","value":{"note":"a\\u0026b \\u003cc\\u003e d\\u2028e\\u2029f","plain":"été/\\"q\\"\\n"}}');
    expect(JSON.parse(text)).toEqual(value);
  });
});
