// npm run bench:profile -- FILE.cpuprofile|DIR [...]: where a process's CPU went, from V8 CPU profiles written
// by `node --cpu-prof` (BENCH_CPU_PROF=<dir> on bench:router and bench:shards). Self time is summed per
// package or kubeloop folder, and per function for the top entries, so a note can say what a figure is made of.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const OWN_FOLDERS = new Set(['router', 'lib', 'webhooks', 'functions', 'cli', 'api', 'bench', 'certs']);

/** Where a frame's code lives: a package, a kubeloop folder (router/apply, lib/kube...), Node's own, or V8's. */
export function category(url: string, functionName: string): string {
  if (!url) {
    if (functionName === '(garbage collector)') return '(gc)';
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(root)') return functionName;
    return '(native)';
  }
  // node:internal/<area> (streams, http2, tls...) says more than node:internal alone.
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, url.startsWith('node:internal/') ? 2 : 1).join('/')}`;
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = path.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  // A bundle (dist/bundle/router.mjs) has no folders left; kubeloop's own sources and dist/ keep theirs.
  // The last such folder in the path (a checkout may itself sit in one named like it: /work/wt/bench/lib/...),
  // with its subfolder when the file is in one.
  const segments = path.split('/');
  const top = segments.findLastIndex((segment, i) => i < segments.length - 1 && OWN_FOLDERS.has(segment));
  if (top >= 0) return top < segments.length - 2 ? `${segments[top]}/${segments[top + 1]}` : segments[top]!;
  return path.split('/').slice(-2).join('/');
}

export interface Summary {
  totalMs: number;
  byCategory: Map<string, number>;
  byFunction: Map<string, number>;
}

/** Self time per category and per function, in milliseconds, (idle) left out of the total. */
export function summarize(profile: CpuProfile): Summary {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, i) => {
    const node = nodes.get(id);
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    if (!node || node.callFrame.functionName === '(idle)') return;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = category(url, functionName);
    totalMs += ms;
    byCategory.set(where, (byCategory.get(where) ?? 0) + ms);
    const fn = url ? `${functionName || '(anonymous)'} ${url.split('/').pop()}:${lineNumber + 1}` : functionName;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  });
  return { totalMs, byCategory, byFunction };
}

function profilesIn(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(path, f));
}

/** The profiles a command line names (files, or every .cpuprofile under a folder); exits with `usage` when none. */
export function profilesArgs(script: string): string[] {
  const files = process.argv.slice(2).flatMap(profilesIn);
  if (files.length === 0) {
    process.stderr.write(`usage: npm run ${script} -- FILE.cpuprofile|DIR [...]\n`);
    process.exit(2);
  }
  return files;
}

function top(map: Map<string, number>, total: number, n: number): string[] {
  return [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, ms]) => `${ms.toFixed(0).padStart(8)} ms ${((ms / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = profilesArgs('bench:profile');
  const TOP = Number(process.env.PROFILE_TOP ?? 25);
  for (const file of files) {
    const summary = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
    console.log(`\n${file}: ${summary.totalMs.toFixed(0)} ms of CPU sampled (idle left out)`);
    console.log('by package or folder:');
    for (const line of top(summary.byCategory, summary.totalMs, TOP)) console.log(`  ${line}`);
    console.log('by function (self time):');
    for (const line of top(summary.byFunction, summary.totalMs, TOP)) console.log(`  ${line}`);
  }
}
