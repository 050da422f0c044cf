// BENCH_PERF=<dir> on bench:router: Linux `perf` samples each controller process while it works, and its CPU is split
// by what ran (kernel, GC, JavaScript, the compilers, TLS, HTTP parsing...): what V8's profiler cannot show, whose
// `(program)` and `(garbage collector)` hide the native part, and the only view of the Go controller's process.
import { spawn, execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** Samples a second: 499 rather than 500 so the sampling does not beat with the event loop's timers. */
export const PERF_HZ = 499;

export const CATEGORIES = ['kernel', 'GC', 'JavaScript', 'IC and builtins', 'compilers', 'TLS', 'HTTP parsing', 'JSON', 'malloc and libc', 'other user'] as const;
export type Category = (typeof CATEGORIES)[number];
/** Samples per category. */
export type NativeSplit = Partial<Record<Category, number>>;

/**
 * What a sample's code is (pure), from perf's DSO and symbol. A stripped binary (the Go baseline's) has no symbols:
 * its samples are `other user`, apart from the kernel's. JIT code without a perf map is `[JIT]` or `[unknown]`.
 */
export function categoryOf(dso: string, symbol: string): Category {
  if (dso.includes('kernel') || symbol.startsWith('[k]')) return 'kernel';
  if (/Scaveng|MarkCompact|Marking|Sweep|Heap::|GlobalHandles|BodyDescriptor|Evacuat|SizeFromMap|MemoryReducer|Compactor|RememberedSet|MemoryChunk/.test(symbol)) return 'GC';
  if (/^\[JIT\]|^\[unknown\]|perf-\d+\.map/.test(dso) || /^JS:/.test(symbol)) return 'JavaScript';
  if (/Json/.test(symbol)) return 'JSON';
  if (/^Builtins_/.test(symbol)) return 'IC and builtins';
  if (/maglev|Maglev|compiler::|turboshaft|baseline::|Parser|Scanner|Preparse|Bytecode|Compile|Deserializ/.test(symbol)) return 'compilers';
  if (/ssl|ossl_|aes|gcm|EVP_|BIO|x25519|sha\d|poly1305|chacha/i.test(symbol)) return 'TLS';
  if (/nghttp2|llhttp|http_parser/.test(symbol)) return 'HTTP parsing';
  if (/libc\.so|libstdc\+\+|libgcc|ld-linux/.test(dso)) return 'malloc and libc';
  return 'other user';
}

/** `perf report --sort dso,sym --stdio -n` lines, summed per category (pure). */
export function splitOfReport(report: string): NativeSplit {
  const split: NativeSplit = {};
  for (const line of report.split('\n')) {
    // "    12.07%   220  [JIT] tid 7373     [.] JS:+'feed ..."  or  "  4.83%  88  [kernel.kallsyms]  [k] finish_task_switch"
    const row = /^\s*[\d.]+%\s+(\d+)\s+(\S.*?)\s{2,}\[(.)\]\s+(.*)$/.exec(line);
    if (!row) continue;
    const [, samples, dso, kind, symbol] = row;
    const category = categoryOf(kind === 'k' ? `${dso} kernel` : dso!, symbol!);
    split[category] = (split[category] ?? 0) + Number(samples);
  }
  return split;
}

/** CPU milliseconds per pod of each category, largest first, as one line of the report (pure). */
export function formatSplit(split: NativeSplit, pods: number): string {
  const total = Object.values(split).reduce((sum, n) => sum + n, 0);
  const msPerPod = (samples: number) => (samples * 1000) / PERF_HZ / pods;
  const parts = CATEGORIES.filter((c) => (split[c] ?? 0) > 0)
    .sort((a, b) => split[b]! - split[a]!)
    .map((c) => `${c} ${msPerPod(split[c]!).toFixed(2)}`);
  return `${msPerPod(total).toFixed(2)} ms/pod sampled = ${parts.join(', ')}`;
}

/** One process sampled from now until `stop`, which resolves with its split; undefined without BENCH_PERF. */
export interface NativeSampling {
  stop(): Promise<NativeSplit | undefined>;
}

/** Starts sampling `pid` into `dir` (BENCH_PERF's) as `<name>.data`; undefined without a directory. */
export function samplePerf(pid: number, name: string, dir = process.env.BENCH_PERF, perfCommand = 'perf'): NativeSampling | undefined {
  if (!dir) return undefined;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.data`);
  const perf = spawn(perfCommand, ['record', '-F', String(PERF_HZ), '-p', String(pid), '-o', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let failed = '';
  perf.stderr?.on('data', (chunk: Buffer) => (failed += chunk.toString()));
  // 'close' comes after an exit and after a failed spawn alike ('exit' does not follow a spawn's 'error').
  const closed = new Promise<void>((resolve) => perf.once('close', () => resolve()));
  perf.once('error', (error) => (failed = `${perfCommand}: ${error.message} (BENCH_PERF needs Linux perf on PATH)`));
  return {
    async stop() {
      perf.kill('SIGINT');
      await closed;
      try {
        const { stdout } = await promisify(execFile)(perfCommand, ['report', '-i', file, '--sort', 'dso,sym', '--stdio', '-n'], { maxBuffer: 64 * 1024 * 1024 });
        return splitOfReport(stdout);
      } catch (error) {
        console.error(`  BENCH_PERF: no split for ${name}: ${failed.trim() || (error as Error).message}`);
        return undefined;
      }
    },
  };
}
