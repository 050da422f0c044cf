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

/**
 * What a router's sample works for, from the files on its stack (the nearest rule that any frame meets wins, in this
 * order): reading watches into the informers, the API writes, the function hop. Watches are read through undici
 * too, so they are looked for before it. A bundle's frames name no file: read a `dist` profile (BENCH_CPU_PROF's
 * default children). A promise continuation's stack does not name the I/O it serves, so "other" holds some of each.
 */
const WORK_RULES: ReadonlyArray<readonly [string, RegExp]> = [
  ['watch and informer', /\/(protobuf-[\w-]+|[\w-]*watch[\w-]*|informer[\w-]*|object-store)\.[jt]s$/],
  ['API writes', /\/(node-http2-writes|json-patch|apply-actions)\.[jt]s$/],
  ['function hop', /\/node_modules\/undici\/|\/(function-client|call-batcher|call-rounds|batch|dispatch)\.[jt]s$/],
];
/** Module loading a `dist` child does where the image restores its snapshot: the profile's, not the router's. */
const MODULE_LOADING = new Set(['wrapSafe', 'compileForInternalLoader', 'compileSourceTextModule', 'compileFunctionForCJSLoader', 'ModuleWrap', 'readFileUtf8', 'realpathSync', 'getPackageScopeConfig', 'compileFunction']);

/** The work a sample serves: GC, module loading, one of WORK_RULES, or other; `stack` from the sampled frame out. */
export function workOf(stack: ReadonlyArray<{ functionName: string; url: string }>): string {
  const leaf = stack[0];
  if (leaf?.functionName === '(garbage collector)' || leaf?.functionName === '(program)') return '(gc, program)';
  if (stack.slice(0, 3).some((frame) => MODULE_LOADING.has(frame.functionName))) return '(module loading)';
  for (const [work, files] of WORK_RULES) if (stack.some((frame) => files.test(frame.url))) return work;
  return 'other (queue, reconcile, timers, continuations)';
}

export interface Summary {
  totalMs: number;
  byCategory: Map<string, number>;
  byFunction: Map<string, number>;
  /** Time by the work it serves (workOf). */
  byWork: Map<string, number>;
}

/** Self time per category and per function, in milliseconds, (idle) left out of the total. */
export function summarize(profile: CpuProfile): Summary {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byWork = new Map<string, number>();
  const parents = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node);
  const stackOf = (node: ProfileNode): ProfileNode['callFrame'][] => {
    const frames = [];
    for (let at: ProfileNode | undefined = node; at; at = parents.get(at.id)) frames.push(at.callFrame);
    return frames;
  };
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
    const work = workOf(stackOf(node));
    byWork.set(work, (byWork.get(work) ?? 0) + ms);
  });
  return { totalMs, byCategory, byFunction, byWork };
}

function profilesIn(path: string, extension: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith(extension)).map((f) => join(path, f));
}

/**
 * The profiles a command line names (files, or every file ending in `extension` under a folder); exits with a usage
 * line when none.
 */
export function profilesArgs(script: string, extension = '.cpuprofile'): string[] {
  const files = process.argv.slice(2).flatMap((path) => profilesIn(path, extension));
  if (files.length === 0) {
    process.stderr.write(`usage: npm run ${script} -- FILE${extension}|DIR [...]\n`);
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
    console.log("by the work it serves (a router's dist profile; see workOf):");
    for (const line of top(summary.byWork, summary.totalMs, TOP)) console.log(`  ${line}`);
    console.log('by function (self time):');
    for (const line of top(summary.byFunction, summary.totalMs, TOP)) console.log(`  ${line}`);
  }
}
