// How deeply a parsed JSON value nests, and how many values it holds, checked without recursion: JSON.parse
// accepts any depth, but cloning, serializing and patching a value nested thousands deep overflows the stack,
// and an object of millions of tiny values costs tens of megabytes of heap per cached copy.

/** Deeper than any Kubernetes object; far below where JSON.stringify and recursive copies overflow. */
export const MAX_JSON_DEPTH = 256;

/**
 * True when `value` nests objects or arrays more than `max` levels deep. Every request a function takes passes
 * here, so it allocates nothing per node: two parallel stacks instead of a tuple each, indexed loops and for-in
 * instead of `Object.values` and for-of (whose iterator results Maglev, a function's top tier, does not elide):
 * 4.6 KB and ~17 us per pod request before, 0.4 KB and <1 us after (docs/performance.md, "Function memory").
 */
export function nestsDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > max) return true;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === 'object' && child !== null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in node) {
      // Own properties only, as Object.values: an enumerable property on Object.prototype is not the value's.
      if (!Object.hasOwn(node, key)) continue;
      const child: unknown = (node as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
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
