// Child process of bench/functions.bench.ts: serves either a registered function ("function <name>") or the
// no-op fastify baseline ("noop") on a free port, prints {"url": ...} on stdout, and runs until killed.
import { fastify } from 'fastify';
import { loadFunction } from '../functions/registry.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { serveFunction } from '../lib/runtime/function-server.ts';

const [mode, name] = process.argv.slice(2);
if (mode === 'noop') {
  // The baseline: fastify parsing the same JSON body and answering a constant, nothing else.
  const app = fastify({ bodyLimit: 8 * 1024 * 1024 });
  app.post('/', async () => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(JSON.stringify({ url }));
} else if (mode === 'function' && name) {
  // Production settings: info-level JSON logs to stdout (discarded by the parent), default body limit.
  const served = await serveFunction(await loadFunction(name), { port: 0, host: '127.0.0.1', logger: createLogger({ name: `function/${name}`, level: 'info' }) });
  console.log(JSON.stringify({ url: served.url }));
} else {
  console.error('usage: function-bench-server.ts noop | function <name>');
  process.exit(2);
}
