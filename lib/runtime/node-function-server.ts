// A reconcile function served on node:http through the Node handler: what `kubeloop function` (and so every
// function image) runs. It answers as the fastify server does (function-server.ts, the generic runtime's option)
// with the same timeouts and shutdown, without loading a framework: ~5 MiB less RSS per function pod
// (docs/performance.md, "Function memory").
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { AnyFunctionDefinition } from './function-kinds.ts';
import type { Logger } from '../observability/logger.ts';
import type { FunctionCore } from './function-core.ts';
import type { FunctionServerOptions } from './function-options.ts';
import { nodeFunctionHandler } from './node-handler.ts';
import { answerClientError } from '../server/client-errors.ts';
import { listeningUrl } from '../server/listening-url.ts';
import { closeSilentConnections, DEFAULT_SERVER_TIMEOUTS, nodeServerTimeouts } from '../server/server-timeouts.ts';

export interface NodeFunctionServer {
  server: Server;
  core: FunctionCore;
  metrics: Registry;
  log: Logger;
  /** True once shutdown has begun; /readyz then answers 503 so load balancers stop sending traffic. */
  isClosing(): boolean;
  beginClosing(): void;
  /** Stops accepting, answers requests on kept-alive connections 503, resolves once in-flight requests finished. */
  close(): Promise<void>;
}

/** What fastify answers a request arriving while it closes (its return503OnClosing), the connection then closed. */
const CLOSING_BODY = '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}';

export function buildNodeFunctionServer(definition: AnyFunctionDefinition, options: FunctionServerOptions = {}): NodeFunctionServer {
  const timeouts = { ...DEFAULT_SERVER_TIMEOUTS, ...options.timeouts };
  let closing = false;
  let closed = false;
  const handler = nodeFunctionHandler(definition, options, () => !closing);
  const server = createServer(nodeServerTimeouts(timeouts), (request, response) => {
    if (!closed) return handler.listener(request, response);
    response.writeHead(503, { 'content-type': 'application/json', 'content-length': CLOSING_BODY.length, connection: 'close' }).end(CLOSING_BODY);
  });
  // As fastify sets them on its server: connectionTimeout, keepAliveTimeout, requestTimeout.
  server.setTimeout(timeouts.idleMs);
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.requestTimeout = timeouts.requestMs;
  server.on('clientError', answerClientError(handler.logger));
  closeSilentConnections(server, timeouts.headersMs, false);
  return {
    server,
    core: handler.core,
    metrics: handler.metrics,
    log: handler.logger,
    isClosing: () => closing,
    beginClosing: () => {
      closing = true;
    },
    close: () => {
      closing = true;
      closed = true;
      // server.close() also closes idle kept-alive connections; it calls back once the busy ones ended.
      return new Promise<void>((resolve, reject) => server.close((error) => (error && (error as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(error) : resolve())));
    },
  };
}

export interface ServedNodeFunction {
  url: string;
  server: NodeFunctionServer;
  close(): Promise<void>;
}

/** Builds and listens; `port: 0` picks a free port (see `url`). */
export async function serveNodeFunction(
  definition: AnyFunctionDefinition,
  where: { port: number; host?: string } & FunctionServerOptions,
): Promise<ServedNodeFunction> {
  const built = buildNodeFunctionServer(definition, where);
  await new Promise<void>((resolve, reject) => {
    built.server.once('error', reject);
    built.server.listen(where.port, where.host ?? '0.0.0.0', () => {
      built.server.off('error', reject);
      resolve();
    });
  });
  return { url: listeningUrl(built.server), server: built, close: () => built.close() };
}
