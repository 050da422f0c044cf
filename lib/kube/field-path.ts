// The simple field paths a Loop's related entries name: `spec.configMap`, `metadata.annotations["a.b/c"]`,
// `spec.volumes[*].configMap.name`, `spec.items[0]`. Read to find names and selectors; picked to project.

export type FieldSegment = { key: string } | { index: number } | { all: true };

export class FieldPathError extends Error {
  constructor(path: string, problem: string) {
    super(`"${path}" ${problem}`);
    this.name = 'FieldPathError';
  }
}

const IDENTIFIER = /^[A-Za-z_$][-A-Za-z0-9_$]*/;

/** Parses a field path; a leading dot is allowed (`.spec.x` as in kubectl's JSONPath). */
export function parseFieldPath(path: string): FieldSegment[] {
  const segments: FieldSegment[] = [];
  let rest = path.startsWith('.') ? path.slice(1) : path;
  if (rest === '') throw new FieldPathError(path, 'is empty');
  let expectDot = false;
  while (rest !== '') {
    if (rest.startsWith('[')) {
      const close = rest.indexOf(']');
      if (close < 0) throw new FieldPathError(path, 'has an unclosed [');
      const inner = rest.slice(1, close);
      rest = rest.slice(close + 1);
      const quoted = /^"([^"]*)"$|^'([^']*)'$/.exec(inner);
      if (inner === '*') segments.push({ all: true });
      else if (/^\d+$/.test(inner)) segments.push({ index: Number(inner) });
      else if (quoted) segments.push({ key: quoted[1] ?? quoted[2] ?? '' });
      else throw new FieldPathError(path, `has [${inner}]: use [*], [<index>] or ["<key>"]`);
      expectDot = true;
      continue;
    }
    if (expectDot) {
      if (!rest.startsWith('.')) throw new FieldPathError(path, `expects "." or "[" before "${rest}"`);
      rest = rest.slice(1);
    }
    const match = IDENTIFIER.exec(rest);
    if (!match) throw new FieldPathError(path, `has no field name at "${rest}" (quote keys with dots or slashes: ["a.b/c"])`);
    segments.push({ key: match[0] });
    rest = rest.slice(match[0].length);
    expectDot = true;
  }
  return segments;
}

/** Every value the path reaches in `value` ([*] fans out); missing fields reach nothing. */
export function readField(value: unknown, path: readonly FieldSegment[]): unknown[] {
  let current: unknown[] = [value];
  for (const segment of path) {
    const next: unknown[] = [];
    for (const v of current) {
      if ('all' in segment) {
        if (Array.isArray(v)) next.push(...v);
      } else if ('index' in segment) {
        if (Array.isArray(v) && segment.index < v.length) next.push(v[segment.index]);
      } else if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, segment.key)) {
        next.push((v as Record<string, unknown>)[segment.key]);
      }
    }
    current = next;
  }
  return current.filter((v) => v !== undefined && v !== null);
}

/** The strings a path reaches: a string field, a list of strings, or strings under [*]. */
export function readStrings(value: unknown, path: readonly FieldSegment[]): string[] {
  return readField(value, path).flatMap((v) => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((e): e is string => typeof e === 'string') : []));
}

/** The part of `value` a path covers, with the same shape (arrays keep their length under [*]). */
function pick(value: unknown, path: readonly FieldSegment[]): unknown {
  const [head, ...rest] = path;
  if (!head) return value;
  if ('all' in head) return Array.isArray(value) ? value.map((e) => pick(e, rest)) : undefined;
  if ('index' in head) throw new Error('projections take keys and [*], not indexes');
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, head.key)) return undefined;
  const picked = pick((value as Record<string, unknown>)[head.key], rest);
  return picked === undefined ? undefined : { [head.key]: picked };
}

function merge(a: unknown, b: unknown): unknown {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (Array.isArray(a) && Array.isArray(b)) return a.map((e, i) => merge(e, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b)) out[k] = merge(out[k], v);
    return out;
  }
  return b;
}

/** `object` reduced to the union of `paths` (each parsed by parseFieldPath without indexes). */
export function projectFields<T extends object>(object: T, paths: readonly (readonly FieldSegment[])[]): Partial<T> {
  let out: unknown = {};
  for (const path of paths) out = merge(out, pick(object, path));
  return out as Partial<T>;
}
