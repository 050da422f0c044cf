// A reconcile function served by the shared fastify bootstrap: POST / and POST /reconcile go through the
// transport-independent core (function-core.ts); health, readiness and metrics come from lib/server.
import type { FastifyError, FastifyInstance } from 'fastify';
import type { AnyFunctionDefinition } from './function-kinds.ts';
import { createServer, DEFAULT_BODY_LIMIT_BYTES, listen, type KubeloopServer } from '../server/create-server.ts';
import { createFunctionCore, type FunctionCore } from './function-core.ts';
import { createFunctionMetrics } from './function-metrics.ts';
import { methodNotAllowed, tooLargeMessage } from './http-replies.ts';
import { functionLogger, type FunctionServerOptions } from './function-options.ts';
import { withSigning } from './signed-core.ts';

export { functionLogger, type FunctionServerOptions };

export interface FunctionServer extends KubeloopServer {
  core: FunctionCore;
}

export function buildFunctionServer(definition: AnyFunctionDefinition, options: FunctionServerOptions = {}): FunctionServer {
  const logger = functionLogger(definition, options);
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const server = createServer({ logger, bodyLimitBytes, ...(options.timeouts ? { timeouts: options.timeouts } : {}) });
  const core = withSigning(createFunctionCore(definition, { logger, metrics: createFunctionMetrics(server.metrics, definition.name) }), options);
  void server.app.register(async (scope: FastifyInstance) => {
    // The core does its own content negotiation (JSON, CloudEvents) so every transport behaves the same:
    // here fastify only reads the body, as a string, within the limit.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.setErrorHandler((error: FastifyError, request, reply) => {
      const out =
        error.statusCode === 413
          ? core.reject(413, 'PayloadTooLarge', tooLargeMessage(bodyLimitBytes), request.headers)
          : error.statusCode !== undefined && error.statusCode < 500
            ? core.reject(error.statusCode, 'InvalidRequest', error.message, request.headers)
            : core.reject(500, 'FunctionError', `unexpected failure: ${error.message}`, request.headers);
      return reply.code(out.status).headers(out.headers).send(out.body);
    });
    for (const url of core.paths) {
      // A synchronous handler: the core never awaits, so no promise is created per request.
      scope.post(url, (request, reply) => {
        const out = core.handle({ headers: request.headers, body: typeof request.body === 'string' ? request.body : '' });
        reply.code(out.status).headers(out.headers).send(out.body);
      });
      scope.route({
        method: ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        url,
        handler: (request, reply) => {
          const out = methodNotAllowed(request.method, url, core.requestKind);
          reply.code(out.status).headers(out.headers).send(out.body);
        },
      });
    }
  });
  return { ...server, core };
}

export interface ServedFunction {
  url: string;
  server: FunctionServer;
  close(): Promise<void>;
}

/** Builds and listens; `port: 0` picks a free port (see `url`). */
export async function serveFunction(
  definition: AnyFunctionDefinition,
  where: { port: number; host?: string } & FunctionServerOptions,
): Promise<ServedFunction> {
  const server = buildFunctionServer(definition, where);
  const url = await listen(server.app, { port: where.port, host: where.host ?? '0.0.0.0' });
  return { url, server, close: () => server.app.close() };
}
