// Child process of bench/functions.bench.ts: serves either a registered function ("function <name>") or the
// no-op fastify baseline ("noop") on a free port, prints {"url": ...} on stdout, and runs until killed.
import { fastify } from 'fastify';
import { loadFunction } from '../functions/registry.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { serveFunction } from '../lib/runtime/function-server.ts';
import { createServer, listen } from '../lib/server/create-server.ts';
import { startTracing } from '../lib/observability/tracing.ts';

const [mode, name] = process.argv.slice(2);
// The parent asks for CPU time over IPC: server CPU per request is robust to a busy machine, req/s is not.
process.on('message', (message) => {
  if (message === 'cpu') process.send?.(process.cpuUsage());
});
// An orderly exit on SIGTERM, so a CPU profile (BENCH_CPU_PROF) is written.
process.once('SIGTERM', () => process.exit(0));
if (mode === 'noop') {
  // The baseline: fastify parsing the same JSON body and answering a constant, nothing else.
  const app = fastify({ bodyLimit: 8 * 1024 * 1024 });
  app.post('/', async () => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(JSON.stringify({ url }));
} else if (mode === 'kubeloop-noop') {
  // Breakdown only: the shared bootstrap (lib/server) with a no-op route, to separate its cost from the function's.
  const server = createServer({ logger: createLogger({ name: 'noop', level: 'info' }) });
  server.app.post('/', async () => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] }));
  console.log(JSON.stringify({ url: await listen(server.app, { port: 0, host: '127.0.0.1' }) }));
} else if (mode === 'signed-function' && name && process.env.KUBELOOP_SIGNING_SECRET) {
  // The same, verifying each request's Standard Webhooks signature and signing each reply.
  const logger = createLogger({ name: `function/${name}`, level: 'info' });
  const served = await serveFunction(await loadFunction(name), { port: 0, host: '127.0.0.1', logger, signingSecret: process.env.KUBELOOP_SIGNING_SECRET });
  console.log(JSON.stringify({ url: served.url }));
} else if (mode === 'traced-function' && name && process.env.BENCH_OTLP_ENDPOINT) {
  // Tracing on as the chart's default sets it: OTLP export (to the parent's sink), 10 % of new traces sampled.
  await startTracing({ otlpEndpoint: process.env.BENCH_OTLP_ENDPOINT, otlpHeaders: {}, samplingRatio: 0.1 }, `function-${name}`);
  const served = await serveFunction(await loadFunction(name), { port: 0, host: '127.0.0.1', logger: createLogger({ name: `function/${name}`, level: 'info' }) });
  console.log(JSON.stringify({ url: served.url }));
} else if (mode === 'function' && name) {
  // Production settings: info-level JSON logs to stdout (discarded by the parent), default body limit.
  const served = await serveFunction(await loadFunction(name), { port: 0, host: '127.0.0.1', logger: createLogger({ name: `function/${name}`, level: 'info' }) });
  console.log(JSON.stringify({ url: served.url }));
} else {
  console.error('usage: function-bench-server.ts noop | kubeloop-noop | function <name> | signed-function <name> (with KUBELOOP_SIGNING_SECRET) | traced-function <name> (with BENCH_OTLP_ENDPOINT)');
  process.exit(2);
}
