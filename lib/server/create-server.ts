// The fastify bootstrap every kubeloop HTTP server shares (function runtime, webhook, router ops endpoint):
// pino logging, a body limit, GET /healthz, /readyz and /metrics, JSON errors that never crash the process,
// request and connection timeouts (slow clients are cut off), and optional TLS whose certificate can be
// swapped while serving (setServingCertificate).
import type { Server as HttpsServer, ServerOptions as HttpsServerOptions } from 'node:https';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { fastify, LogController, type FastifyError, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from '../observability/logger.ts';
import { createMetricsRegistry, metricsViewFor } from '../observability/metrics.ts';

import { DEFAULT_BODY_LIMIT_BYTES } from './body-limit.ts';
import { lazyChildLoggerFactory } from '../observability/lazy-child-logger.ts';
import { answerClientError } from './client-errors.ts';
import { listeningUrl } from './listening-url.ts';
import { closeSilentConnections, DEFAULT_SERVER_TIMEOUTS, nodeServerTimeouts, type ServerTimeouts } from './server-timeouts.ts';
import { failedRequestBody, type ErrorReply } from '../runtime/http-replies.ts';

export { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_SERVER_TIMEOUTS, type ErrorReply, type ServerTimeouts };

export interface ServerOptions {
  logger: Logger;
  /** Largest accepted request body; larger ones get 413. Default DEFAULT_BODY_LIMIT_BYTES. */
  bodyLimitBytes?: number;
  /** GET /readyz answers 200 when this returns true, 503 otherwise. Default: ready until shutdown begins. */
  ready?: () => boolean | Promise<boolean>;
  /** Registry served on GET /metrics; a fresh one with default process metrics when omitted. */
  metrics?: Registry;
  /** Serve GET /metrics here (default true); false when a separate ops server serves it (the webhook). */
  serveMetrics?: boolean;
  /** Serve HTTPS with these options (key, cert, ...). Swap the certificate later with setServingCertificate. */
  https?: HttpsServerOptions;
  /** Request and connection timeouts; each defaults to DEFAULT_SERVER_TIMEOUTS. */
  timeouts?: Partial<ServerTimeouts>;
  /** Log one "incoming request" and one "request completed" line per request. Default false: hot paths log their own line. */
  requestLogging?: boolean;
}

export interface KubeloopServer {
  app: FastifyInstance;
  metrics: Registry;
  /** True once shutdown has begun; /readyz then answers 503 so load balancers stop sending traffic. */
  isClosing(): boolean;
  /** Marks the server as closing (readyz 503) without closing it yet. */
  beginClosing(): void;
}

export function createServer(options: ServerOptions): KubeloopServer {
  const metrics = options.metrics ?? createMetricsRegistry();
  let closing = false;
  const timeouts = { ...DEFAULT_SERVER_TIMEOUTS, ...options.timeouts };
  // Passed to http(s).createServer: Node enforces these while a request is still being received.
  const nodeTimeouts = nodeServerTimeouts(timeouts);
  const common = {
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    logController: new LogController({ disableRequestLogging: !(options.requestLogging ?? false) }),
    // Kept-alive idle sockets are closed on shutdown; in-flight requests are drained.
    forceCloseConnections: 'idle' as const,
    genReqId: requestIds(),
    childLoggerFactory: lazyChildLoggerFactory,
    clientErrorHandler: answerClientError(options.logger),
  };
  // fastify's overloads type http and https servers apart; routes, hooks and inject are the same for both.
  const app = (
    options.https ? fastify({ ...common, https: { ...nodeTimeouts, ...options.https } }) : fastify({ ...common, http: nodeTimeouts })
  ) as unknown as FastifyInstance;

  closeSilentConnections(app.server, timeouts.headersMs, options.https !== undefined);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const statusCode = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (statusCode < 500) {
      request.log.info({ err: error, statusCode }, 'request rejected');
      const body: ErrorReply = { statusCode, code: error.code ?? 'BadRequest', message: error.message };
      return reply.code(statusCode).send(body);
    }
    return reply.code(statusCode).send(failedRequestBody(request.log, error, statusCode));
  });
  app.setNotFoundHandler((request, reply) => {
    const body: ErrorReply = { statusCode: 404, code: 'NotFound', message: `no route ${request.method} ${request.url}` };
    return reply.code(404).send(body);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const ready = !closing && (options.ready ? await options.ready() : true);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready' });
  });
  if (options.serveMetrics !== false) {
    app.get('/metrics', async (request, reply) => {
      const view = metricsViewFor(metrics, request.headers.accept);
      // Streamed as it is rendered (metrics-text.ts); a registry that cannot be read fails before the status is sent.
      return reply.header('content-type', view.contentType).send(Readable.from(await view.page()));
    });
  }

  return {
    app,
    metrics,
    isClosing: () => closing,
    beginClosing: () => {
      closing = true;
    },
  };
}

/** Request ids unique across processes (a random prefix) without a UUID per request: `<prefix>-<counter>`. */
function requestIds(): () => string {
  const prefix = randomUUID().slice(0, 8);
  let next = 0;
  return () => `${prefix}-${(next++).toString(36)}`;
}

/**
 * Replaces the serving certificate of an HTTPS server in place; new TLS handshakes use it, open connections
 * keep theirs. A server that verifies client certificates passes its `ca` again: the context is replaced whole.
 */
export function setServingCertificate(app: FastifyInstance, credentials: { key: string | Buffer; cert: string | Buffer; ca?: string | Buffer }): void {
  const server = app.server as unknown as Partial<HttpsServer>;
  if (typeof server.setSecureContext !== 'function') throw new Error('setServingCertificate: the server is not serving HTTPS');
  server.setSecureContext(credentials);
}

/** Listens and returns the base URL ("http://127.0.0.1:8080"), resolving port 0 to the port actually bound. */
export async function listen(app: FastifyInstance, where: { port: number; host?: string }): Promise<string> {
  await app.listen({ port: where.port, host: where.host ?? '0.0.0.0' });
  return listeningUrl(app.server);
}
