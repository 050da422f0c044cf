// Samples the resident set size of the kubeloop processes from /proc (Linux), one series per process
// lifetime: a restarted router starts a new series.
import { readFile } from 'node:fs/promises';
import { rssSlopeMiBPerMinute, steadyHalf, type RssSample } from './invariants.ts';
import type { RssSeries } from './summary.ts';

const MiB = 1024 * 1024;

export async function readRssBytes(pid: number): Promise<number | undefined> {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export class RssSampler {
  readonly series = new Map<string, { role: string; pid: number; samples: RssSample[] }>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly processes: () => Array<{ role: string; pid: number }>,
    private readonly now: () => number,
  ) {}

  start(intervalMs: number): void {
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), intervalMs);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async sample(): Promise<void> {
    for (const { role, pid } of this.processes()) {
      const bytes = await readRssBytes(pid);
      if (bytes === undefined) continue;
      const key = `${role}#${pid}`;
      const entry = this.series.get(key) ?? { role, pid, samples: [] };
      entry.samples.push({ atMs: this.now(), bytes });
      this.series.set(key, entry);
    }
  }

  /** The longest-lived series of each role (the one a leak would show in). */
  summary(): RssSeries[] {
    const best = new Map<string, RssSeries & { samples: RssSample[] }>();
    for (const { role, pid, samples } of this.series.values()) {
      const first = samples[0];
      const last = samples.at(-1);
      if (!first || !last) continue;
      const spanMs = last.atMs - first.atMs;
      if ((best.get(role)?.spanMs ?? -1) >= spanMs) continue;
      best.set(role, { role, pid, startMiB: first.bytes / MiB, endMiB: last.bytes / MiB, spanMs, slopeMiBPerMinute: rssSlopeMiBPerMinute(steadyHalf(samples)), samples });
    }
    return [...best.values()].sort((a, b) => a.role.localeCompare(b.role)).map(({ samples: _samples, ...series }) => series);
  }

  /** Samples of the series summary() reports, by role. */
  samplesOf(role: string, pid: number): RssSample[] {
    return this.series.get(`${role}#${pid}`)?.samples ?? [];
  }
}
