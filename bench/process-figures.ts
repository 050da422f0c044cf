// What the benches read beside their own clock: samples of a Prometheus text exposition (the API server's and
// the webhook's /metrics), a process's CPU time, memory and context switches from /proc, the same way for a
// Node process and a Go one, and its run-queue wait from /proc schedstat.
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

export interface ProcessReading {
  /** User + system CPU time so far, in milliseconds (clock ticks of 10 ms). */
  cpuMs: number;
  /** Resident set now and its peak over the process's life (VmHWM), in bytes. */
  rss: number;
  peakRss: number;
  /** Of `rss`, pages backed by files (the node binary's code and read-only data): shared between processes running the same binary. */
  rssFile: number;
  /** Times the main thread was taken off a CPU so far, waiting (voluntary) or preempted (involuntary). */
  switches: number;
}

/** Reads /proc/<pid>/stat and /proc/<pid>/status. */
export function readProcess(pid: number): ProcessReading {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  // Fields after the parenthesised command name: utime and stime are the 12th and 13th of them.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  const switches = [...status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  return { cpuMs: ticks * 10, rss: kib('VmRSS'), peakRss: kib('VmHWM'), rssFile: kib('RssFile'), switches };
}

/** Times the main thread went to sleep on its own (voluntary context switches): a Node process's event-loop wake-ups. */
export function voluntarySwitches(pid: number): number {
  return Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);
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
