// Child process of bench/tenants-scale.bench.ts: the tenants' copier function (each ConfigMap's data copied into an
// owned Secret), served in its own process so its calls are timed apart from the bench's own event loop, which drives
// the busy tenants' creates and patches. Prints {"url": ...}; over IPC it answers "calls" (the last call per
// namespace) and "quiet" (the quiet changes' arrivals since the last ask). Runs until killed.
import { pino } from 'pino';
import type { ReconcileRequest } from '../lib/contract/types.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { serveFunction } from '../lib/runtime/index.ts';
import { defineFunction, respond } from '../lib/sdk/index.ts';
import { CHANGED_AT, type QuietArrival } from './tenants-scale-decomposition.ts';

const calls = new Map<string, number>();
let quiet: QuietArrival[] = [];

const copier = defineFunction({
  name: 'tenants-scale-copier',
  reconcile: (request: ReconcileRequest) => {
    const receivedAt = Date.now();
    const object = request.object as (ReconcileRequest['object'] & { data?: Record<string, string> }) | undefined;
    const namespace = object?.metadata?.namespace ?? '';
    calls.set(namespace, receivedAt);
    const changedAt = Number(object?.metadata?.annotations?.[CHANGED_AT]);
    if (changedAt > 0 && request.trigger?.type === 'MODIFIED') {
      quiet.push({ namespace, changedAt, resourceVersion: object?.metadata?.resourceVersion ?? '', builtAt: Date.parse(request.now), receivedAt });
    }
    if (!object?.metadata?.name) return respond([]);
    const data = Object.fromEntries(Object.entries(object.data ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    return respond([{ op: 'apply', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `${object.metadata.name}-copy` }, data } }]);
  },
});

process.once('SIGTERM', () => process.exit(0));
process.on('message', (message) => {
  if (message === 'calls') process.send?.({ calls: [...calls] });
  if (message === 'quiet') {
    process.send?.({ quiet });
    quiet = [];
  }
});
const logger = createLogger({ name: 'fn', level: 'warn', destination: pino.destination({ dest: 2, sync: false }) });
const served = await serveFunction(copier, { port: 0, host: '127.0.0.1', logger });
console.log(JSON.stringify({ url: served.url }));
