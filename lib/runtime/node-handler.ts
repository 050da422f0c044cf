// A reconcile function as a plain Node (req, res) listener, for http.createServer or any framework that
// accepts one (express, Google Cloud Functions), with the same behaviour as the fastify server.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnyFunctionDefinition } from './function-kinds.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from '../server/create-server.ts';
import { createMetricsRegistry } from '../observability/metrics.ts';
import { createFunctionCore } from './function-core.ts';
import { createFunctionMetrics } from './function-metrics.ts';
import { functionLogger, type FunctionServerOptions } from './function-server.ts';
import { withSigning } from './signed-core.ts';
import { routeStandalone } from './standalone-routes.ts';

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
    request.on('end', () => resolve(over ? undefined : Buffer.concat(chunks, size).toString('utf8')));
    request.on('error', reject);
  });
}

export function toNodeHandler(
  definition: AnyFunctionDefinition,
  options: FunctionServerOptions = {},
): (request: IncomingMessage, response: ServerResponse) => void {
  const registry = createMetricsRegistry();
  const core = withSigning(createFunctionCore(definition, { logger: functionLogger(definition, options), metrics: createFunctionMetrics(registry, definition.name) }), options);
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  return (request, response) => {
    routeStandalone(core, limit, request.method ?? 'GET', request.url ?? '/', request.headers, (max) => readLimited(request, max), registry).then(
      (out) => {
        // A body announced as too large is not read: close the connection instead of draining it.
        if (out.status === 413 && !request.readableEnded) response.setHeader('connection', 'close');
        response.writeHead(out.status, out.headers).end(out.body);
      },
      (error: unknown) => {
        // Only the body stream can fail here (client went away); the core itself never throws.
        if (!response.headersSent) response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ statusCode: 400, code: 'BadRequest', message: `could not read the request: ${String(error)}` }));
      },
    );
  };
}
