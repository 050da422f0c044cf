// Path-level differences between two JSON values ("/spec/replicas: expected 3, got 1"), key order ignored.
import { jsonEqual, pointerEscape } from '../kube/object-meta.ts';

export interface Difference {
  /** JSON-pointer-like location, prefixed by the caller's context (e.g. the action it belongs to). */
  path: string;
  message: string;
}

export function show(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return 'undefined';
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function diffJson(expected: unknown, actual: unknown, path = ''): Difference[] {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const out: Difference[] = [];
    const shared = Math.min(expected.length, actual.length);
    for (let i = 0; i < shared; i++) out.push(...diffJson(expected[i], actual[i], `${path}/${i}`));
    for (let i = shared; i < expected.length; i++) out.push({ path: `${path}/${i}`, message: `missing ${show(expected[i])}` });
    for (let i = shared; i < actual.length; i++) out.push({ path: `${path}/${i}`, message: `unexpected ${show(actual[i])}` });
    return out;
  }
  if (isObject(expected) && isObject(actual)) {
    const out: Difference[] = [];
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].sort();
    for (const key of keys) {
      const where = `${path}/${pointerEscape(key)}`;
      if (!(key in actual)) out.push({ path: where, message: `missing (expected ${show(expected[key])})` });
      else if (!(key in expected)) out.push({ path: where, message: `unexpected ${show(actual[key])}` });
      else out.push(...diffJson(expected[key], actual[key], where));
    }
    return out;
  }
  if (Object.is(expected, actual)) return [];
  return [{ path: path || '/', message: `expected ${show(expected)}, got ${show(actual)}` }];
}

export { jsonEqual as jsonEquals };
