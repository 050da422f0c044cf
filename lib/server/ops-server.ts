// The router's ops server on node:http: GET /healthz, /readyz and /metrics answered as the fastify bootstrap
// (create-server.ts) answers them, with its timeouts and shutdown, so the router loads no framework at start-up
// (docs/performance.md, "The router's start-up CPU").
import type { Registry } from 'prom-client';
import type { Logger } from '../observability/logger.ts';
import { metricsViewFor } from '../observability/metrics.ts';
import { metricsRequest, noRoute, opsRoute, requestPath } from '../runtime/standalone-routes.ts';
import { serveMetrics } from './metrics-reply.ts';
import { createNodeServer, sendReply, type NodeServer } from './node-server.ts';
import type { ServerTimeouts } from './server-timeouts.ts';

export interface OpsServerOptions {
  logger: Logger;
  /** Served on GET /metrics. */
  metrics: Registry;
  /** GET /readyz answers 200 while this returns true (and shutdown has not begun), 503 otherwise. */
  ready: () => boolean;
  timeouts?: Partial<ServerTimeouts>;
}

export function createOpsServer(options: OpsServerOptions): NodeServer {
  const shutdown = { began: (): boolean => false };
  const routes = { metrics: (accept: string | undefined) => metricsViewFor(options.metrics, accept), ready: () => !shutdown.began() && options.ready() };
  const served = createNodeServer(
    (request, response) => {
      const method = request.method ?? 'GET';
      const url = request.url ?? '/';
      const metrics = metricsRequest(routes, method, url, request.headers);
      if (metrics) return serveMetrics(response, metrics, method === 'HEAD', options.logger);
      const path = requestPath(url);
      sendReply(response, typeof path === 'string' ? (opsRoute(routes, method, path) ?? noRoute(method, url)) : path);
    },
    { log: options.logger, ...(options.timeouts ? { timeouts: options.timeouts } : {}) },
  );
  shutdown.began = served.isClosing;
  return served;
}
