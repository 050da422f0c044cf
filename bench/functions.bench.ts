// npm run bench:functions: autocannon (10 connections, 10 s) against a function serving a recorded pod
// request and, in the same run, against a no-op fastify route; prints req/s, p50, p99 and the ratio.
// Each server runs in its own child process so autocannon and the server do not share an event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const FUNCTION = 'pod-name-label';
const FIXTURE = fileURLToPath(new URL(`../test/fixtures/${FUNCTION}/adds-label-to-annotated-pod.json`, import.meta.url));
const SERVER = fileURLToPath(new URL('./function-bench-server.ts', import.meta.url));
const CONNECTIONS = 10;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

interface Figures {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  /** Server CPU time (user + system) per request, in microseconds. */
  cpuMicros: number;
}

type Run = { requests: number; latencies: number[]; cpuMicros: number };

async function startServer(args: string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, ...args], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    if (line.startsWith('{"url"')) {
      // Keep draining stdout (function logs) so the child never blocks on a full pipe.
      child.stdout!.resume();
      return { url: (JSON.parse(line) as { url: string }).url, child };
    }
  }
  throw new Error(`server ${args.join(' ')} exited before printing its URL`);
}

function cpuOf(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (usage) => resolve((usage as NodeJS.CpuUsage).user + (usage as NodeJS.CpuUsage).system));
    child.send('cpu');
  });
}

async function load(server: { url: string; child: ChildProcess }, body: string, seconds: number): Promise<Run> {
  const before = await cpuOf(server.child);
  const run = await autocannonRun(server.url, body, seconds);
  const cpu = (await cpuOf(server.child)) - before;
  return { ...run, cpuMicros: cpu / run.requests };
}

/** One autocannon run; latencies are collected from its per-response event because its own histogram has 1 ms resolution. */
function autocannonRun(url: string, body: string, seconds: number): Promise<{ requests: number; latencies: number[] }> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      { url: `${url}/`, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: CONNECTIONS, duration: seconds },
      (error, result) => {
        if (error) return reject(error);
        if (result.errors > 0 || result.non2xx > 0) return reject(new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx replies`));
        resolve({ requests: result.requests.total, latencies });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime: number) => void latencies.push(responseTime));
  });
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function summarize(runs: Run[]): Figures {
  const all = Float64Array.from(runs.flatMap((r) => r.latencies)).sort();
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  const cpuMicros = runs.reduce((sum, r) => sum + r.cpuMicros * r.requests, 0) / requests;
  return { requestsPerSecond: requests / (runs.length * DURATION_S), p50: percentile(all, 50), p99: percentile(all, 99), cpuMicros };
}

const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { request: unknown };
const body = JSON.stringify(fixture.request);
console.log(
  `POST of a recorded pod request (${body.length} bytes), ${CONNECTIONS} connections, ${DURATION_S} s per run, ` +
    `${ROUNDS} round(s) alternating baseline and function after a ${WARMUP_S} s warm-up each\n`,
);
// BENCH_BREAKDOWN=1 adds the shared bootstrap (lib/server) with a no-op route, to see where the difference goes.
const targets: Array<[string, string[]]> = [
  ['no-op fastify route', ['noop']],
  ...(process.env.BENCH_BREAKDOWN ? ([['lib/server no-op route', ['kubeloop-noop']]] as Array<[string, string[]]>) : []),
  [`function ${FUNCTION}`, ['function', FUNCTION]],
];
const servers = await Promise.all(targets.map(([, args]) => startServer(args)));
const runs: Run[][] = targets.map(() => []);
try {
  for (const server of servers) await load(server, body, WARMUP_S);
  // Alternating rounds spread the noise of a shared machine over all sides instead of one.
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, server] of servers.entries()) runs[i]!.push(await load(server, body, DURATION_S));
  }
} finally {
  for (const server of servers) server.child.kill('SIGTERM');
}
const figures = runs.map(summarize);
const row = (name: string, f: Figures) =>
  `${name.padEnd(26)} ${f.requestsPerSecond.toFixed(0).padStart(8)} req/s   p50 ${f.p50.toFixed(3).padStart(7)} ms   p99 ${f.p99.toFixed(3).padStart(7)} ms   server CPU ${f.cpuMicros.toFixed(1).padStart(6)} us/req`;
targets.forEach(([name], i) => console.log(row(name, figures[i]!)));
const baseline = figures[0]!;
const fn = figures[figures.length - 1]!;
const ratio = fn.requestsPerSecond / baseline.requestsPerSecond;
console.log(`\nratio function/baseline req/s: ${ratio.toFixed(2)} (target >= 0.80)   function p99: ${fn.p99.toFixed(3)} ms (target <= 2 ms)`);
console.log(`server CPU per request, function/baseline: ${(fn.cpuMicros / baseline.cpuMicros).toFixed(2)}   (load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores)`);
