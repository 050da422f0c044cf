// What the HTTP benchmarks (functions.bench.ts, webhook.bench.ts) share: a server started as a tsx child
// process (so load generator and server do not share an event loop), an autocannon POST run that keeps
// every response time, and the req/s, p50, p99 figures computed from them.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { LOOP_PROBE_ARGS } from './loop-probe-reader.ts';

export interface Figures {
  requestsPerSecond: number;
  p50: number;
  p99: number;
}

export interface LoadRun {
  requests: number;
  /** Milliseconds, one per response. */
  latencies: number[];
}

export interface SpawnedServer {
  url: string;
  child: ChildProcess;
}

/** The `url` of a line such as `{"url":"http://127.0.0.1:1234"}`, the bench servers' ready signal. */
export const urlLine = (line: string): string | undefined => (line.startsWith('{"url"') ? (JSON.parse(line) as { url: string }).url : undefined);

/** BENCH_CPU_PROF=<dir>: the servers write V8 CPU profiles there (node --cpu-prof) when they exit. */
const PROFILE = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
/** BENCH_CHILD_LOG=<dir>: each server's stdout after its ready line (logs, --trace-gc) kept in <dir>/<pid>.log. */
const CHILD_LOG_DIR = process.env.BENCH_CHILD_LOG;

/** How node runs a built server instead of TypeScript through tsx: an image's flags and environment (bench/tenants-scale.bench.ts). */
export interface BuiltNode {
  /** What goes between node and the arguments: node's flags and a script (cli/bin.js) or a startup snapshot. */
  execArgv: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * Runs `node --import tsx ...args` (or, given `built`, `node <its flags> ...args` with its environment) and resolves
 * once `match` finds the URL in a line of its stdout. `nodeFlags` go before either (experiments: --trace-gc). `ipc` adds an IPC channel (the function bench asks its servers
 * for their CPU usage over it).
 */
export async function spawnUntilUrl(
  args: string[],
  options: { match?: (line: string) => string | undefined; cwd?: string; ipc?: boolean; built?: BuiltNode; nodeFlags?: string[] } = {},
): Promise<SpawnedServer> {
  const stdio: StdioOptions = options.ipc ? ['ignore', 'pipe', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'];
  const node = [...(options.nodeFlags ?? []), ...(options.built ? options.built.execArgv : ['--import', 'tsx', ...LOOP_PROBE_ARGS])];
  const env = options.built ? { env: { ...process.env, ...options.built.env } } : {};
  const child = spawn(process.execPath, [...PROFILE, ...node, ...args], { stdio, ...env, ...(options.cwd ? { cwd: options.cwd } : {}) });
  const match = options.match ?? urlLine;
  for await (const line of createInterface({ input: child.stdout! })) {
    const url = match(line);
    if (url) {
      // Keep draining stdout (logs) so the child never blocks on a full pipe; into <dir>/<pid>.log with BENCH_CHILD_LOG=<dir>.
      if (CHILD_LOG_DIR) child.stdout!.pipe(createWriteStream(join(CHILD_LOG_DIR, `${child.pid}.log`)));
      else child.stdout!.resume();
      return { url, child };
    }
  }
  throw new Error(`${args.join(' ')} exited before it was ready`);
}

/** CPU microseconds (user + system) a child spawned with `ipc` has used: it answers 'cpu' with process.cpuUsage(). */
export function childCpuMicros(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (usage: NodeJS.CpuUsage) => resolve(usage.user + usage.system));
    child.send('cpu');
  });
}

export interface PostLoad {
  url: string;
  body: string;
  connections: number;
  seconds: number;
  /** For HTTPS servers: the CA to trust. */
  ca?: string;
  /** Extra request headers (a signature). */
  headers?: Record<string, string>;
  /** Requests per second over all connections (autocannon's overallRate); as fast as the server answers when unset. */
  rate?: number;
}

/** One autocannon run of JSON POSTs; any error or non-2xx reply rejects, so figures are never of failures. */
export function autocannonPost(load: PostLoad): Promise<LoadRun> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: load.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...load.headers },
        body: load.body,
        connections: load.connections,
        duration: load.seconds,
        ...(load.rate ? { overallRate: load.rate } : {}),
        ...(load.ca ? { tlsOptions: { ca: load.ca } } : {}),
      },
      (error, result) => {
        if (error) return reject(error);
        if (result.errors > 0 || result.non2xx > 0) return reject(new Error(`${load.url}: ${result.errors} errors, ${result.non2xx} non-2xx replies`));
        resolve({ requests: result.requests.total, latencies });
      },
    );
    // autocannon's own histogram has 1 ms resolution; collect per-response times instead.
    instance.on('response', (_client, _status, _bytes, responseTime: number) => void latencies.push(responseTime));
  });
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** req/s over `seconds` and the p50/p99 of `latencies` (ms). */
export function figures(latencies: number[], requests: number, seconds: number): Figures {
  const sorted = Float64Array.from(latencies).sort();
  return { requestsPerSecond: requests / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}
