// Path-level differences between two JSON values ("/spec/replicas: expected 3, got 1"), key order ignored.
import { pointerEscape } from '../kube/object-meta.ts';

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

/** One changed location: `before` absent means added, `after` absent means removed. */
export interface JsonChange {
  path: string;
  before?: unknown;
  after?: unknown;
  /** An array element beyond the other array's end (rather than an object key). */
  element?: true;
}

/** Every location where `after` differs from `before` (arrays by position, objects by key, sorted). */
export function jsonChanges(before: unknown, after: unknown, path = ''): JsonChange[] {
  if (Array.isArray(before) && Array.isArray(after)) {
    const out: JsonChange[] = [];
    const shared = Math.min(before.length, after.length);
    for (let i = 0; i < shared; i++) out.push(...jsonChanges(before[i], after[i], `${path}/${i}`));
    for (let i = shared; i < before.length; i++) out.push({ path: `${path}/${i}`, before: before[i], element: true });
    for (let i = shared; i < after.length; i++) out.push({ path: `${path}/${i}`, after: after[i], element: true });
    return out;
  }
  if (isObject(before) && isObject(after)) {
    const out: JsonChange[] = [];
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      const where = `${path}/${pointerEscape(key)}`;
      if (!(key in after)) out.push({ path: where, before: before[key] });
      else if (!(key in before)) out.push({ path: where, after: after[key] });
      else out.push(...jsonChanges(before[key], after[key], where));
    }
    return out;
  }
  if (Object.is(before, after)) return [];
  return [{ path: path || '/', before, after }];
}

export function diffJson(expected: unknown, actual: unknown, path = ''): Difference[] {
  return jsonChanges(expected, actual, path).map((c) => ({
    path: c.path,
    message: !('after' in c) ? (c.element ? `missing ${show(c.before)}` : `missing (expected ${show(c.before)})`) : !('before' in c) ? `unexpected ${show(c.after)}` : `expected ${show(c.before)}, got ${show(c.after)}`,
  }));
}

