// npm run bench:heap-profile -- FILE.heapprofile|DIR [...]: what a process allocated and where, from the sampling heap
// profiles of BENCH_HEAP_PROF (bench/heap-sampling.ts). PROFILE_PER=<n> divides by n (the pods of the run) as well.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { category, profilesArgs } from './cpu-profile-summary.ts';

export interface HeapProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  /** Bytes allocated by this frame itself, V8's estimate from its samples. */
  selfSize: number;
  children: HeapProfileNode[];
}

export interface HeapProfile {
  head: HeapProfileNode;
}

export interface HeapSummary {
  totalBytes: number;
  byCategory: Map<string, number>;
  byFunction: Map<string, number>;
  /** By the nearest frame in kubeloop's own code on the stack: who asked for what Node or a package allocated. */
  byOwnCaller: Map<string, number>;
}

const add = (map: Map<string, number>, key: string, bytes: number) => map.set(key, (map.get(key) ?? 0) + bytes);
const frameName = ({ functionName, url, lineNumber }: HeapProfileNode['callFrame']) => (url ? `${functionName || '(anonymous)'} ${url.split('/').pop()}:${lineNumber + 1}` : functionName || '(root)');
/** kubeloop's own folders, as category() names them (router/apply, lib/kube, bench...). */
const isOwn = (where: string) => /^(router|lib|webhooks|functions|cli|api|bench|certs)(\/|$)/.test(where);

/** Bytes allocated per category, per function and per nearest own caller. */
export function summarizeHeap(profile: HeapProfile): HeapSummary {
  const summary: HeapSummary = { totalBytes: 0, byCategory: new Map(), byFunction: new Map(), byOwnCaller: new Map() };
  // Iterative: a deep stack must not overflow ours.
  const pending: Array<{ node: HeapProfileNode; own: string | undefined }> = [{ node: profile.head, own: undefined }];
  while (pending.length > 0) {
    const { node, own: above } = pending.pop()!;
    const where = category(node.callFrame.url, node.callFrame.functionName);
    const own = isOwn(where) ? frameName(node.callFrame) : above;
    if (node.selfSize > 0) {
      summary.totalBytes += node.selfSize;
      add(summary.byCategory, where, node.selfSize);
      add(summary.byFunction, frameName(node.callFrame), node.selfSize);
      add(summary.byOwnCaller, own ?? '(no kubeloop frame)', node.selfSize);
    }
    for (const child of node.children) pending.push({ node: child, own });
  }
  return summary;
}

function top(map: Map<string, number>, total: number, per: number, n: number): string[] {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1).padStart(10)} KB`;
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, bytes]) => `${kb(bytes)}${per > 1 ? ` ${(bytes / per).toFixed(0).padStart(7)} B each` : ''} ${((bytes / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = profilesArgs('bench:heap-profile', '.heapprofile');
  const TOP = Number(process.env.PROFILE_TOP ?? 25);
  const PER = Number(process.env.PROFILE_PER ?? 1);
  for (const file of files) {
    const summary = summarizeHeap(JSON.parse(readFileSync(file, 'utf8')) as HeapProfile);
    const each = PER > 1 ? `, ${(summary.totalBytes / PER / 1024).toFixed(1)} KB for each of ${PER}` : '';
    console.log(`\n${file}: ${(summary.totalBytes / 1024 / 1024).toFixed(1)} MiB allocated${each}`);
    console.log('by package or folder:');
    for (const line of top(summary.byCategory, summary.totalBytes, PER, TOP)) console.log(`  ${line}`);
    console.log('by the nearest kubeloop frame (who asked):');
    for (const line of top(summary.byOwnCaller, summary.totalBytes, PER, TOP)) console.log(`  ${line}`);
    console.log('by function (self):');
    for (const line of top(summary.byFunction, summary.totalBytes, PER, TOP)) console.log(`  ${line}`);
  }
}
