// The router's ops server on node:http: GET /healthz, /readyz and /metrics answered as the fastify bootstrap
// (create-server.ts) answers them, with its timeouts and shutdown, so the router loads no framework at start-up
// (docs/performance.md, "The router's start-up CPU").
import { randomUUID } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Logger } from '../observability/logger.ts';
import { metricsViewFor } from '../observability/metrics.ts';
import { jsonReply } from '../runtime/http-replies.ts';
import type { ErrorReply } from './create-server.ts';
import { noRoute, opsRoute, requestPath } from '../runtime/standalone-routes.ts';
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
      const path = requestPath(url);
      const reply = typeof path === 'string' ? opsRoute(routes, method, path, request.headers).then((out) => out ?? noRoute(method, url)) : Promise.resolve(path);
      void reply
        .catch((error: unknown) => {
          // As the fastify bootstrap answers a failed route: logged once under an id the reply names.
          const errorId = randomUUID();
          options.logger.error({ err: error, errorId }, 'request failed');
          const body: ErrorReply = { statusCode: 500, code: 'InternalError', message: `internal error (id ${errorId})`, errorId };
          return jsonReply(500, body);
        })
        .then((out) => sendReply(response, out));
    },
    { log: options.logger, ...(options.timeouts ? { timeouts: options.timeouts } : {}) },
  );
  shutdown.began = served.isClosing;
  return served;
}
