// The bench's side of event-loop-probe.ts: asks a child (SIGUSR2) for its event-loop stalls since the last ask, and
// prints them. BENCH_LOOP_PROBE=<dir> turns the probe on in the children spawnUntilUrl starts.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Stalls counted at or over each of these (ms): what a quiet tenant's event may wait behind. */
export const STALL_THRESHOLDS_MS = [5, 10, 20, 50] as const;

export interface LoopStalls {
  seconds: number;
  /** Per STALL_THRESHOLDS_MS, the stalls at least that long. */
  over: number[];
  /** The time the loop was held in stalls of 5 ms or more, beyond the timer's 1 ms. */
  stalledMs: number;
  maxMs: number;
}

export const LOOP_PROBE_DIR = process.env.BENCH_LOOP_PROBE;
/** node flags that preload the probe; none without BENCH_LOOP_PROBE. */
export const LOOP_PROBE_ARGS = LOOP_PROBE_DIR ? ['--import', new URL('./event-loop-probe.ts', import.meta.url).href] : [];

/** The stalls `pid` saw since the last ask (the first ask starts its count); undefined without the probe. */
export async function readLoopStalls(pid: number): Promise<LoopStalls | undefined> {
  if (!LOOP_PROBE_DIR) return undefined;
  const file = join(LOOP_PROBE_DIR, `${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 500 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 10));
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LoopStalls) : undefined;
}

/** "stalls >=5/10/20/50 ms: 12/4/1/0 per 10 s, 180 ms held, max 31 ms". */
export function formatStalls(s: LoopStalls | undefined): string {
  if (!s) return '-';
  return `stalls >=${STALL_THRESHOLDS_MS.join('/')} ms: ${s.over.join('/')} in ${s.seconds.toFixed(0)} s, ${s.stalledMs.toFixed(0)} ms held, max ${s.maxMs.toFixed(0)} ms`;
}
