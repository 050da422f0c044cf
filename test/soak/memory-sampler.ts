// Samples a memory figure of each kubeloop process, one series per process lifetime (a restarted router
// starts a new series): RSS from /proc (Linux), or the retained heap through the process's inspector.
import { readFile } from 'node:fs/promises';
import { slopeMiBPerMinute, steadyHalf, type MemorySample } from './invariants.ts';
import type { MemorySeries } from './summary.ts';

const MiB = 1024 * 1024;

export interface SampledProcess {
  role: string;
  pid: number;
  inspectPort?: number;
}

export async function readRssBytes({ pid }: SampledProcess): Promise<number | undefined> {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

export class MemorySampler {
  readonly series = new Map<string, { role: string; pid: number; samples: MemorySample[] }>();
  #timer: NodeJS.Timeout | undefined;
  #sampling: Promise<void> | undefined;

  constructor(
    private readonly processes: () => SampledProcess[],
    private readonly now: () => number,
    private readonly read: (process: SampledProcess) => Promise<number | undefined> = readRssBytes,
  ) {}

  start(intervalMs: number): void {
    void this.sample();
    this.#timer = setInterval(() => void this.sample(), intervalMs);
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One round over the processes; a round still running (a slow GC) is joined, not doubled. */
  sample(): Promise<void> {
    this.#sampling ??= this.#round().finally(() => (this.#sampling = undefined));
    return this.#sampling;
  }

  async #round(): Promise<void> {
    for (const proc of this.processes()) {
      const bytes = await this.read(proc);
      if (bytes === undefined) continue;
      const key = `${proc.role}#${proc.pid}`;
      const entry = this.series.get(key) ?? { role: proc.role, pid: proc.pid, samples: [] };
      entry.samples.push({ atMs: this.now(), bytes });
      this.series.set(key, entry);
    }
  }

  /** The longest-lived series of each role (the one a leak would show in). */
  summary(): MemorySeries[] {
    const best = new Map<string, MemorySeries & { samples: MemorySample[] }>();
    for (const { role, pid, samples } of this.series.values()) {
      const first = samples[0];
      const last = samples.at(-1);
      if (!first || !last) continue;
      const spanMs = last.atMs - first.atMs;
      if ((best.get(role)?.spanMs ?? -1) >= spanMs) continue;
      best.set(role, { role, pid, startMiB: first.bytes / MiB, endMiB: last.bytes / MiB, spanMs, slopeMiBPerMinute: slopeMiBPerMinute(steadyHalf(samples)), samples });
    }
    return [...best.values()].sort((a, b) => a.role.localeCompare(b.role)).map(({ samples: _samples, ...series }) => series);
  }

  /** Samples of the series summary() reports, by role. */
  samplesOf(role: string, pid: number): MemorySample[] {
    return this.series.get(`${role}#${pid}`)?.samples ?? [];
  }
}
