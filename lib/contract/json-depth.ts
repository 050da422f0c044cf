// How deeply a parsed JSON value nests, and how many values it holds, checked without recursion: JSON.parse
// accepts any depth, but cloning, serializing and patching a value nested thousands deep overflows the stack,
// and an object of millions of tiny values costs tens of megabytes of heap per cached copy.

/** Deeper than any Kubernetes object; far below where JSON.stringify and recursive copies overflow. */
export const MAX_JSON_DEPTH = 256;

/** True when `value` nests objects or arrays more than `max` levels deep. */
export function nestsDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child as object, depth + 1]);
    }
  }
  return false;
}

/**
 * Default budget of JSON values (objects, arrays, strings, numbers...) in one cached Kubernetes object: a large
 * pod holds a few thousand; a 1.5 MB object of empty objects holds about 400,000 and costs ~30 MiB of heap.
 */
export const DEFAULT_MAX_OBJECT_VALUES = 100_000;

/** How many values `value` holds, counting stopped past `max` (so a bomb costs at most max + 1 steps). */
export function countValues(value: unknown, max: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= max) {
    const node = stack.pop();
    count += 1;
    if (typeof node === 'object' && node !== null) {
      for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push(child);
    }
  }
  return count;
}
