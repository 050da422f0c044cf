// npm run bench:long-tasks -- FILE.cpuprofile|DIR [...]: the stretches in which a process's event loop never went idle
// for longer than LONG_TASK_MS (default 5), from V8 CPU profiles (BENCH_CPU_PROF=<dir>), with what ran in each: an
// event that arrives then waits for the stretch to end, so these are what a p99 of a few ms more is made of.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { category, profilesArgs, type CpuProfile, type ProfileNode } from './cpu-profile-summary.ts';

export type { CpuProfile };

export interface LongTask {
  /** ms from the profile's start. */
  startMs: number;
  /** Wall time, the process's waits for a core included. */
  ms: number;
  /**
   * The time it ran: a sample's delta beyond PREEMPTED_MS is the process off its core (a loaded machine), counted at
   * the sampling interval. A stretch long in `ms` but short in `cpuMs` is the machine, not the code.
   */
  cpuMs: number;
  /** ms (as cpuMs) per kubeloop frame (or package, when no kubeloop frame is on the stack) nearest the top of the stack. */
  byFrame: Map<string, number>;
  gcMs: number;
}

const name = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return url ? `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : functionName;
};

/** The frame a sample is charged to: the deepest kubeloop frame on its stack, else its own (a package's, V8's). */
function chargedFrame(id: number, nodes: Map<number, ProfileNode>, parents: Map<number, number>): string {
  const self = nodes.get(id)!;
  for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
    const node = nodes.get(at)!;
    const where = category(node.callFrame.url, node.callFrame.functionName);
    if (node.callFrame.url && !where.startsWith('node:') && !node.callFrame.url.includes('/node_modules/')) return name(node);
  }
  return self.callFrame.url ? `${category(self.callFrame.url, self.callFrame.functionName)}: ${name(self)}` : name(self);
}

/** A sample delta beyond this many sampling intervals (the median delta) is a wait for a core, not work. */
const PREEMPTED_FACTOR = 3;

/**
 * Every run of consecutive non-idle samples that ran at least `minMs`. A sample's time is the delta to the next one (the
 * profiler records the delta before each sample), so a stretch ends at the first idle sample after it.
 */
export function longTasks(profile: CpuProfile, minMs: number): LongTask[] {
  const deltas = profile.timeDeltas.map((d) => d / 1000).filter((d) => d > 0).sort((a, b) => a - b);
  const interval = deltas[Math.floor(deltas.length / 2)] ?? 1;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parents.set(child, n.id);
  const tasks: LongTask[] = [];
  let at = 0;
  let current: LongTask | undefined;
  const close = () => {
    if (current && current.cpuMs >= minMs) tasks.push(current);
    current = undefined;
  };
  profile.samples.forEach((id, i) => {
    at += (profile.timeDeltas[i] ?? 0) / 1000;
    const wall = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const ms = wall > PREEMPTED_FACTOR * interval ? interval : wall;
    const node = nodes.get(id);
    if (!node || node.callFrame.functionName === '(idle)') return close();
    current ??= { startMs: at, ms: 0, cpuMs: 0, byFrame: new Map(), gcMs: 0 };
    current.ms += wall;
    current.cpuMs += ms;
    if (node.callFrame.functionName === '(garbage collector)') current.gcMs += ms;
    const frame = chargedFrame(id, nodes, parents);
    current.byFrame.set(frame, (current.byFrame.get(frame) ?? 0) + ms);
  });
  close();
  return tasks;
}

const topOf = (map: Map<string, number>, n: number) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = profilesArgs('bench:long-tasks');
  const MIN_MS = Number(process.env.LONG_TASK_MS ?? 5);
  // LONG_TASK_FROM_S: only stretches after this many seconds into the profile (e.g. the phases, not the start-up).
  const FROM_MS = Number(process.env.LONG_TASK_FROM_S ?? 0) * 1000;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const tasks = longTasks(profile, MIN_MS).filter((t) => t.startMs >= FROM_MS);
    const seconds = (profile.endTime - profile.startTime) / 1e6;
    const totalMs = tasks.reduce((sum, t) => sum + t.cpuMs, 0);
    console.log(`\n${file}: ${seconds.toFixed(0)} s profiled, ${tasks.length} stretches of ${MIN_MS} ms or more running (${totalMs.toFixed(0)} ms, ${tasks.reduce((s, t) => s + t.gcMs, 0).toFixed(0)} ms of it GC)`);
    const byFrame = new Map<string, number>();
    for (const t of tasks) for (const [frame, ms] of t.byFrame) byFrame.set(frame, (byFrame.get(frame) ?? 0) + ms);
    console.log('in them, by the deepest kubeloop frame (or package):');
    for (const [frame, ms] of topOf(byFrame, Number(process.env.PROFILE_TOP ?? 25))) console.log(`  ${ms.toFixed(0).padStart(7)} ms  ${frame}`);
    console.log('the longest:');
    for (const t of [...tasks].sort((a, b) => b.cpuMs - a.cpuMs).slice(0, Number(process.env.LONG_TASK_TOP ?? 15))) {
      const what = topOf(t.byFrame, 3).map(([frame, ms]) => `${frame} ${ms.toFixed(0)}`).join('; ');
      console.log(`  at ${(t.startMs / 1000).toFixed(1)} s: ${t.cpuMs.toFixed(0)} ms running, ${t.ms.toFixed(0)} ms wall (GC ${t.gcMs.toFixed(0)}): ${what}`);
    }
  }
}
