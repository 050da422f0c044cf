// V8's old-generation growing factor, set by a long-running process itself at start: NODE_OPTIONS refuses
// --heap-growing-percent, and a flag in an image's ENTRYPOINT is out of reach of a Deployment's env and args.
import { setFlagsFromString } from 'node:v8';

/**
 * The V8 flag to set for `percent` (old space may grow by this much over what survived the last major GC before
 * the next one; 0: V8's own factor, up to 4x on a large machine), or undefined when there is nothing to set:
 * 0, or node's own command line already names the flag (an explicit `node --heap-growing-percent=N` wins).
 */
export function heapGrowingFlag(percent: number, execArgv: readonly string[]): string | undefined {
  if (percent === 0) return undefined;
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return undefined;
  return `--heap-growing-percent=${percent}`;
}

/**
 * Sets the factor for the rest of the process's life; returns the flag set, if any. V8 reads it at each major
 * GC, so setting it after start takes effect from the next one (docs/performance.md, "Router peak RSS").
 */
export function applyHeapGrowingPercent(percent: number, execArgv: readonly string[] = process.execArgv): string | undefined {
  const flag = heapGrowingFlag(percent, execArgv);
  if (flag) setFlagsFromString(flag);
  return flag;
}
