// What the webhook bench reads beside its own clock: samples of a Prometheus text exposition (the API
// server's and the webhook's /metrics), and a process's CPU time and run-queue wait from /proc schedstat.
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses `name{a="b",...} value` lines; comments and unparsable lines are skipped. */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([-+0-9.eEInfNa]+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `labels`. */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Difference of `total` between two scrapes: what happened in between. */
export function delta(before: Sample[], after: Sample[], name: string, labels: Record<string, string> = {}): number {
  return total(after, name, labels) - total(before, name, labels);
}

export interface ProcessTime {
  /** CPU time of all threads, ms. */
  cpuMs: number;
  /** Time threads were runnable but waiting for a CPU (run-queue delay), ms. */
  waitMs: number;
}

/**
 * Summed over the process's threads, or of its main thread only (a Node event loop: the thread every
 * request waits for). Linux /proc/<pid>/task/<tid>/schedstat: run ns, wait ns, time slices.
 */
export function processTime(pid: number, mainThreadOnly = false): ProcessTime {
  let cpuNs = 0;
  let waitNs = 0;
  for (const tid of mainThreadOnly ? [String(pid)] : readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
      cpuNs += run ?? 0;
      waitNs += wait ?? 0;
    } catch {
      // The thread exited between the listing and the read.
    }
  }
  return { cpuMs: cpuNs / 1e6, waitMs: waitNs / 1e6 };
}

export function timeSince(before: ProcessTime, pid: number, mainThreadOnly = false): ProcessTime {
  const now = processTime(pid, mainThreadOnly);
  return { cpuMs: now.cpuMs - before.cpuMs, waitMs: now.waitMs - before.waitMs };
}

/** The 1-minute load average and the number of CPUs: how contended the machine was. */
export function machineLoad(): string {
  const [one] = readFileSync('/proc/loadavg', 'utf8').split(' ');
  return `load average ${one} on ${availableParallelism()} CPUs`;
}

/** "met", "missed by 12.30 ms", or unmeasured when the baseline's own tail was the larger one (noise). */
export function verdict(added: number, target: number): string {
  if (added < 0) return 'not measured (negative: the baseline\'s own tail was larger, noise)';
  return added <= target ? 'met' : `missed by ${(added - target).toFixed(2)} ms`;
}
