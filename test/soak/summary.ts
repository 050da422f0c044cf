// The soak's summary: plain data gathered by the run, and its rendering as the table people read and
// the JSON the e2e test asserts on. Pure.
import { FAULT_KINDS, type FaultKind } from './fault-plan.ts';
import type { Violation } from './invariants.ts';

export interface MemorySeries {
  role: string;
  pid: number;
  startMiB: number;
  endMiB: number;
  spanMs: number;
  /** Least-squares slope over the second half of the series. */
  slopeMiBPerMinute: number;
}

export interface SoakSummary {
  seed: number;
  /** Wall-clock start, ISO. */
  startedAt: string;
  plannedMinutes: number;
  /** Churn and faults, then the quiet period. */
  churnMs: number;
  totalMs: number;
  churned: Record<string, number>;
  failedCalls: Record<string, number>;
  faults: Partial<Record<FaultKind, number>>;
  faultErrors: string[];
  reconcileCalls: number;
  /** What the final checks covered, e.g. { pods: 41, PodSets: 3 }. */
  checked: Record<string, number>;
  /** From the end of the last fault until every final check held; undefined when it never did. */
  convergenceMs?: number;
  /** From the churn's last operation until every final check held (the last faults may end later). */
  convergedAfterChurnMs?: number;
  violations: Violation[];
  rss: MemorySeries[];
  /** Used JS heap right after a forced full GC, sampled every 30 s: what the leak check judges. */
  heap: MemorySeries[];
  logDir: string;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => `  ${r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')}`.trimEnd());
}

/** The violation's time as offset and wall clock, e.g. "+83.2s (10:41:07Z)". */
export function violationTime(summary: Pick<SoakSummary, 'startedAt'>, atMs: number): string {
  const wall = new Date(Date.parse(summary.startedAt) + atMs).toISOString().slice(11, 19);
  return `+${seconds(atMs)} (${wall}Z)`;
}

export function formatSummary(s: SoakSummary): string {
  const lines: string[] = [];
  lines.push(`kubeloop soak: seed ${s.seed}, ${s.plannedMinutes} min planned, started ${s.startedAt}`);
  lines.push(`  duration       churn ${seconds(s.churnMs)}, total ${seconds(s.totalMs)} (with start-up and the quiet period)`);
  const churned = Object.entries(s.churned).sort(([a], [b]) => a.localeCompare(b));
  const totalChurned = churned.reduce((a, [, n]) => a + n, 0);
  const failed = Object.values(s.failedCalls).reduce((a, n) => a + n, 0);
  lines.push(`  churned        ${totalChurned} operations (${failed} calls failed or skipped during faults)`);
  lines.push(...table(churned.map(([what, n]) => ['  ', what, String(n)])));
  const faultTotal = Object.values(s.faults).reduce((a, n) => a + (n ?? 0), 0);
  lines.push(`  faults         ${faultTotal} injected`);
  lines.push(...table(FAULT_KINDS.map((kind) => ['  ', kind, String(s.faults[kind] ?? 0)])));
  for (const error of s.faultErrors) lines.push(`    fault error: ${error}`);
  lines.push(`  reconciles     ${s.reconcileCalls} function calls seen by the fault proxies`);
  const afterChurn = s.convergedAfterChurnMs === undefined ? '' : ` (${seconds(s.convergedAfterChurnMs)} after the churn stopped)`;
  lines.push(`  convergence    ${s.convergenceMs === undefined ? 'NOT converged' : `${seconds(s.convergenceMs)} after the last fault ended${afterChurn}`}`);
  lines.push(`  checked        ${Object.entries(s.checked).map(([what, n]) => `${n} ${what}`).join(', ')}`);
  const memory = (series: MemorySeries[]): string[] =>
    table(series.map((r) => ['  ', r.role, `pid ${r.pid}`, `${r.startMiB.toFixed(1)} -> ${r.endMiB.toFixed(1)} MiB`, `${r.slopeMiBPerMinute >= 0 ? '+' : ''}${r.slopeMiBPerMinute.toFixed(2)} MiB/min`, `over ${seconds(r.spanMs)}`]));
  lines.push('  retained       JS heap + external after a full GC: start -> end, slope over the second half (judged)');
  lines.push(...memory(s.heap));
  lines.push('  RSS            start -> end, slope over the second half (reported)');
  lines.push(...memory(s.rss));
  lines.push(`  violations     ${s.violations.length}`);
  for (const v of [...s.violations].sort((a, b) => a.atMs - b.atMs)) lines.push(`    ${violationTime(s, v.atMs)}  ${v.invariant}: ${v.detail}`);
  lines.push(`  logs           ${s.logDir}`);
  lines.push(s.violations.length === 0 && s.convergenceMs !== undefined ? 'PASS' : 'FAIL');
  return lines.join('\n');
}

/** Exit code: 0 clean, 1 on any violation or no convergence. */
export function exitCodeOf(s: SoakSummary): number {
  return s.violations.length === 0 && s.convergenceMs !== undefined ? 0 : 1;
}
