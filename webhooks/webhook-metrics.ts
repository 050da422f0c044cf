// controller-runtime's webhook metrics for every admission route (the Watcher sidecar's and the AdmissionHook
// gateway's): requests by HTTP code, latency and requests in flight, labelled by the route's path pattern.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, exponentialBuckets, Gauge, Histogram, type Registry } from '../lib/observability/metrics.ts';

/** controller_runtime_webhook_latency_seconds' buckets: prometheus.ExponentialBuckets(10e-9, 10, 12). */
const WEBHOOK_BUCKETS = exponentialBuckets(10e-9, 10, 12);

const started = new WeakMap<FastifyRequest, number>();

/** Counts POSTs to the admission routes; the route pattern (never the raw URL) keeps the label bounded. */
export function registerWebhookMetrics(app: FastifyInstance, registry: Registry, isAdmissionRoute: (pattern: string) => boolean): void {
  const requests = new Counter<'webhook' | 'code'>({ name: 'controller_runtime_webhook_requests_total', help: 'Total number of admission requests by HTTP status code.', labelNames: ['webhook', 'code'], registers: [registry] });
  const latency = new Histogram<'webhook'>({ name: 'controller_runtime_webhook_latency_seconds', help: 'Histogram of the latency of processing admission requests', labelNames: ['webhook'], buckets: WEBHOOK_BUCKETS, registers: [registry] });
  const inFlight = new Gauge<'webhook'>({ name: 'controller_runtime_webhook_requests_in_flight', help: 'Current number of admission requests being served.', labelNames: ['webhook'], registers: [registry] });
  const routeOf = (request: FastifyRequest): string | undefined => {
    const pattern = request.routeOptions.url;
    return request.method === 'POST' && pattern !== undefined && isAdmissionRoute(pattern) ? pattern : undefined;
  };
  app.addHook('onRequest', async (request) => {
    const webhook = routeOf(request);
    if (webhook === undefined) return;
    started.set(request, performance.now());
    inFlight.inc({ webhook });
  });
  app.addHook('onResponse', async (request, reply) => {
    const webhook = routeOf(request);
    const since = started.get(request);
    if (webhook === undefined || since === undefined) return;
    inFlight.dec({ webhook });
    latency.observe({ webhook }, (performance.now() - since) / 1000);
    requests.inc({ webhook, code: String(reply.statusCode) });
  });
}
