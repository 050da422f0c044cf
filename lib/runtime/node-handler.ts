// A reconcile function as a plain Node (req, res) listener, for http.createServer or any framework that
// accepts one (express, Google Cloud Functions), with the same behaviour as the fastify server. The
// node:http server function images run (node-function-server.ts) is this listener.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { AnyFunctionDefinition } from './function-kinds.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from '../server/body-limit.ts';
import { createMetricsRegistry, metricsViewFor } from '../observability/metrics.ts';
import type { Logger } from '../observability/logger.ts';
import { createFunctionCore, type FunctionCore } from './function-core.ts';
import { createFunctionMetrics } from './function-metrics.ts';
import { functionLogger, type FunctionServerOptions } from './function-options.ts';
import { withSigning } from './signed-core.ts';
import { metricsRequest, routeStandalone, type StandaloneRoutes } from './standalone-routes.ts';
import { serveMetrics } from '../server/metrics-reply.ts';
import { sendReply } from '../server/node-server.ts';

function readLimited(request: IncomingMessage, limitBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) over = true;
      // Keep reading (and dropping) the rest so the reply can be written on a healthy connection.
      if (!over) chunks.push(chunk);
    });
    // Most bodies arrive in one chunk: decoded as they are, without a copy into a new buffer first.
    request.on('end', () => resolve(over ? undefined : chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8')));
    request.on('error', reject);
  });
}

export interface NodeFunctionHandler {
  listener: (request: IncomingMessage, response: ServerResponse) => void;
  core: FunctionCore;
  metrics: Registry;
  logger: Logger;
}

/** The listener with what a server around it needs: its core, metrics and logger; `ready` answers GET /readyz. */
export function nodeFunctionHandler(definition: AnyFunctionDefinition, options: FunctionServerOptions, ready?: () => boolean): NodeFunctionHandler {
  const registry = createMetricsRegistry();
  const logger = functionLogger(definition, options);
  const core = withSigning(createFunctionCore(definition, { logger, metrics: createFunctionMetrics(registry, definition.name) }), options);
  const routes: StandaloneRoutes = {
    bodyLimitBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    metrics: (accept) => metricsViewFor(registry, accept),
    ...(ready ? { ready } : {}),
  };
  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    const metrics = metricsRequest(routes, request.method ?? 'GET', request.url ?? '/', request.headers);
    if (metrics) return serveMetrics(response, metrics, request.method === 'HEAD', logger);
    routeStandalone(core, routes, request.method ?? 'GET', request.url ?? '/', request.headers, (max) => readLimited(request, max)).then(
      (out) => {
        // A body announced as too large is not read: close the connection instead of draining it.
        if (out.status === 413 && !request.readableEnded) response.setHeader('connection', 'close');
        sendReply(response, out);
      },
      (error: unknown) => {
        // Only the body stream can fail here (client went away); the core itself never throws.
        if (!response.headersSent) response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ statusCode: 400, code: 'BadRequest', message: `could not read the request: ${String(error)}` }));
      },
    );
  };
  return { listener, core, metrics: registry, logger };
}

export function toNodeHandler(definition: AnyFunctionDefinition, options: FunctionServerOptions = {}): (request: IncomingMessage, response: ServerResponse) => void {
  return nodeFunctionHandler(definition, options).listener;
}
