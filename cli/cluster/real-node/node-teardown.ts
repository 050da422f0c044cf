// The node's cgroup root, and removing what a real node leaves once its programs are stopped: container processes in the kubelet's cgroups,
// containerd's shims in the node's namespaces, the cgroups themselves, and the host-wide kernel settings the
// kubelet changed (put back as they were). Also what tests use to prove nothing is left.
import { readdirSync, readFileSync, readlinkSync, rmdirSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NODE_CGROUP_ROOT } from './node-config.ts';

const CGROUP_FS = '/sys/fs/cgroup';

/** Every directory of the node's cgroup subtree, in each hierarchy (v1 controllers and the unified one), deepest first. */
export function nodeCgroupDirs(root = CGROUP_FS): string[] {
  const tops: string[] = [];
  const base = join(root, NODE_CGROUP_ROOT);
  if (exists(base)) tops.push(base);
  for (const entry of safeReaddir(root)) {
    const top = join(root, entry, NODE_CGROUP_ROOT);
    if (exists(top)) tops.push(top);
  }
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of safeReaddir(dir)) {
      const child = join(dir, entry);
      if (isDir(child)) walk(child);
    }
    out.push(dir);
  };
  for (const top of tops) walk(top);
  return out;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function pidsOf(cgroupDir: string): number[] {
  try {
    return readFileSync(join(cgroupDir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The kubelet requires its cgroupRoot to exist in every hierarchy. cgroup v1's cpuset needs cpus and mems before a
 * task may join, so the root gets its parent's.
 */
export async function createNodeCgroupRoot(root = CGROUP_FS): Promise<void> {
  for (const entry of safeReaddir(root)) {
    const parent = join(root, entry);
    if (!isDir(parent) || !exists(join(parent, 'cgroup.procs'))) continue;
    const dir = join(parent, NODE_CGROUP_ROOT);
    await mkdir(dir, { recursive: true });
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      if (exists(join(parent, file))) await writeFile(join(dir, file), await readFile(join(parent, file), 'utf8'));
    }
  }
}

/** PIDs in the node's namespaces (shims, the holder, anything a crash left) or in its cgroups (containers). */
export function nodeProcesses(netNs: string | undefined, mntNs: string | undefined): number[] {
  const pids = new Set<number>();
  for (const dir of nodeCgroupDirs()) for (const pid of pidsOf(dir)) pids.add(pid);
  if (netNs || mntNs) {
    for (const entry of safeReaddir('/proc')) {
      if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
      try {
        if (readlinkSync(`/proc/${entry}/ns/net`) === netNs || readlinkSync(`/proc/${entry}/ns/mnt`) === mntNs) pids.add(Number(entry));
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return withDescendants(pids);
}

/** Adds every descendant: a container started outside the kubelet's cgroups still hangs below its shim. */
function withDescendants(pids: Set<number>): number[] {
  const children = new Map<number, number[]>();
  for (const entry of safeReaddir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent pid is the 2nd field after the parenthesised command name (which may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const out = new Set(pids);
  const queue = [...pids];
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    for (const child of children.get(pid) ?? []) {
      if (out.has(child) || child === process.pid) continue;
      out.add(child);
      queue.push(child);
    }
  }
  return [...out];
}

/** SIGKILLs every node process until none is left (a shim may start a process while we kill), then removes the cgroups. */
export async function killNodeProcessesAndCgroups(netNs: string | undefined, mntNs: string | undefined, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = nodeProcesses(netNs, mntNs);
    if (pids.length === 0) break;
    if (Date.now() > deadline) throw new Error(`real node teardown: processes ${pids.join(', ')} survive SIGKILL`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    await sleep(200);
  }
  // rmdir of an empty cgroup can fail briefly while the kernel reaps its last task: retry.
  for (;;) {
    const left = nodeCgroupDirs();
    if (left.length === 0) return;
    for (const dir of left) {
      try {
        rmdirSync(dir);
      } catch {
        // Retried below until the deadline.
      }
    }
    if (Date.now() > deadline) throw new Error(`real node teardown: cgroups left: ${nodeCgroupDirs().join(', ')}`);
    await sleep(200);
  }
}

/** Host-wide settings the kubelet sets at start (protectKernelDefaults false): saved before, restored after. */
const KUBELET_TUNABLES = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops'] as const;

/** Also written to `file`, so the orphan reaper can put them back when the supervisor is SIGKILLed. */
export async function saveKernelTunables(file: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of KUBELET_TUNABLES) out[t] = (await readFile(`/proc/sys/${t}`, 'utf8')).trim();
  await writeFile(file, JSON.stringify(out));
  return out;
}

export async function restoreKernelTunables(saved: Record<string, string>): Promise<void> {
  for (const [t, value] of Object.entries(saved)) {
    if ((await readFile(`/proc/sys/${t}`, 'utf8')).trim() !== value) await writeFile(`/proc/sys/${t}`, `${value}\n`);
  }
}
