// npm run bench:functions: autocannon (10 connections, 10 s) against a function serving a recorded pod
// request and, in the same run, against a no-op fastify route; prints req/s, p50, p99 and the ratio.
// Each server runs in its own child process so autocannon and the server do not share an event loop.
// BENCH_TRACING=1 adds the function with tracing on (10 % sampling, OTLP export to a local sink) against the
// same function with tracing off in the same run: the CPU per call tracing adds, for calls the function samples
// itself (no traceparent) and for calls whose caller did not sample (traceparent ...-00, as behind the router).
import { createServer as createHttpServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { generateSigningSecret, parseSigningSecret, signRequest } from '../lib/signing/webhook-signature.ts';
import { autocannonPost, childCpuMicros, figures, spawnUntilUrl, type Figures as LoadFigures, type LoadRun, type SpawnedServer } from './autocannon-kit.ts';

const FUNCTION = 'pod-name-label';
const FIXTURE = fileURLToPath(new URL(`../test/fixtures/${FUNCTION}/adds-label-to-annotated-pod.json`, import.meta.url));
const SERVER = fileURLToPath(new URL('./function-bench-server.ts', import.meta.url));
const CONNECTIONS = 10;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

interface Figures extends LoadFigures {
  /** Server CPU time (user + system) per request, in microseconds. */
  cpuMicros: number;
}

type Run = LoadRun & { cpuMicros: number };

const SECRET = generateSigningSecret();
process.env.KUBELOOP_SIGNING_SECRET = SECRET;
const startServer = (args: string[]): Promise<SpawnedServer> => spawnUntilUrl([SERVER, ...args], { ipc: true });

async function load(server: SpawnedServer, body: string, seconds: number, headers?: Record<string, string>): Promise<Run> {
  const before = await childCpuMicros(server.child);
  const run = await autocannonPost({ url: `${server.url}/`, body, connections: CONNECTIONS, seconds, ...(headers ? { headers } : {}) });
  const cpu = (await childCpuMicros(server.child)) - before;
  return { ...run, cpuMicros: cpu / run.requests };
}

function summarize(runs: Run[]): Figures {
  const requests = runs.reduce((sum, r) => sum + r.requests, 0);
  const cpuMicros = runs.reduce((sum, r) => sum + r.cpuMicros * r.requests, 0) / requests;
  return { ...figures(runs.flatMap((r) => r.latencies), requests, runs.length * DURATION_S), cpuMicros };
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
  // Signed calls: the same request with Standard Webhooks headers (valid for the run's few minutes).
  [`signed function ${FUNCTION}`, ['signed-function', FUNCTION]],
];
const TRACING = process.env.BENCH_TRACING === '1';
// The OTLP sink: accepts every export (what a collector does first), so only the function's side is measured.
const sink = TRACING ? createHttpServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end())) : undefined;
if (sink) {
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  process.env.BENCH_OTLP_ENDPOINT = `http://127.0.0.1:${(sink.address() as { port: number }).port}`;
  targets.push([`traced ${FUNCTION} (10 %)`, ['traced-function', FUNCTION]]);
  // Behind the router, which decides and sends its unsampled context along: the function records nothing.
  targets.push([`traced, caller unsampled`, ['traced-function', FUNCTION, 'unsampled-caller']]);
}
/** The unsampled caller's traceparent: a valid trace and span id, the sampled flag unset (as the router sends it for 9 calls in 10). */
const UNSAMPLED_TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
const signed = (args: string[]) =>
  args[0] === 'signed-function' ? signRequest(parseSigningSecret(SECRET), 'loop/bench', body) : args[2] === 'unsampled-caller' ? { traceparent: UNSAMPLED_TRACEPARENT } : undefined;
const servers = await Promise.all(targets.map(([, args]) => startServer(args)));
const runs: Run[][] = targets.map(() => []);
try {
  for (const [i, server] of servers.entries()) await load(server, body, WARMUP_S, signed(targets[i]![1]));
  // Alternating rounds spread the noise of a shared machine over all sides instead of one.
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, server] of servers.entries()) runs[i]!.push(await load(server, body, DURATION_S, signed(targets[i]![1])));
  }
} finally {
  for (const server of servers) server.child.kill('SIGTERM');
  sink?.close();
}
const results = runs.map(summarize);
const row = (name: string, f: Figures) =>
  `${name.padEnd(26)} ${f.requestsPerSecond.toFixed(0).padStart(8)} req/s   p50 ${f.p50.toFixed(3).padStart(7)} ms   p99 ${f.p99.toFixed(3).padStart(7)} ms   server CPU ${f.cpuMicros.toFixed(1).padStart(6)} us/req`;
targets.forEach(([name], i) => console.log(row(name, results[i]!)));
const baseline = results[0]!;
const at = (args0: string) => results[targets.findIndex(([, args]) => args[0] === args0)]!;
const fn = at('function');
const signedFn = at('signed-function');
const ratio = fn.requestsPerSecond / baseline.requestsPerSecond;
console.log(`\nratio function/baseline req/s: ${ratio.toFixed(2)} (target >= 0.80)   function p99: ${fn.p99.toFixed(3)} ms (target <= 2 ms)`);
console.log(`server CPU per request, function/baseline: ${(fn.cpuMicros / baseline.cpuMicros).toFixed(2)}   (load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores)`);
console.log(
  `signing overhead: signed/unsigned req/s ${(signedFn.requestsPerSecond / fn.requestsPerSecond).toFixed(2)}   ` +
    `server CPU ${(signedFn.cpuMicros - fn.cpuMicros).toFixed(1)} us/req more (${(signedFn.cpuMicros / fn.cpuMicros).toFixed(2)}x)   p50 ${fn.p50.toFixed(3)} -> ${signedFn.p50.toFixed(3)} ms`,
);
if (TRACING) {
  const traced = results[targets.findIndex(([, args]) => args[0] === 'traced-function' && args.length === 2)]!;
  const behindRouter = results[targets.findIndex(([, args]) => args[2] === 'unsampled-caller')]!;
  console.log(
    `tracing overhead at 10 % sampling: server CPU ${(traced.cpuMicros - fn.cpuMicros).toFixed(1)} us/req more (${(((traced.cpuMicros / fn.cpuMicros) - 1) * 100).toFixed(1)} %, goal <= 5 %)   ` +
      `req/s ${(traced.requestsPerSecond / fn.requestsPerSecond).toFixed(2)}x   p50 ${fn.p50.toFixed(3)} -> ${traced.p50.toFixed(3)} ms`,
  );
  console.log(`tracing overhead of a call whose caller did not sample (traceparent ...-00): server CPU ${(behindRouter.cpuMicros - fn.cpuMicros).toFixed(1)} us/req more (${(((behindRouter.cpuMicros / fn.cpuMicros) - 1) * 100).toFixed(1)} %)`);
}
