// How deeply a parsed JSON value nests, checked without recursion: JSON.parse accepts any depth, but
// cloning, serializing and patching a value nested thousands deep overflows the stack.

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
