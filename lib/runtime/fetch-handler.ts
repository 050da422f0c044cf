// A reconcile function as a Web-standard fetch handler, (Request) => Promise<Response>, for FaaS platforms
// and runtimes without fastify (Cloudflare-style workers, Deno, Bun, Lambda adapters).
import type { AnyFunctionDefinition } from './function-kinds.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from '../server/create-server.ts';
import { createFunctionCore, type RequestHeaders } from './function-core.ts';
import { functionLogger, type FunctionServerOptions } from './function-server.ts';
import { withSigning } from './signed-core.ts';
import { routeStandalone } from './standalone-routes.ts';

async function readLimited(request: Request, limitBytes: number): Promise<string | undefined> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

export function toFetchHandler(definition: AnyFunctionDefinition, options: FunctionServerOptions = {}): (request: Request) => Promise<Response> {
  const core = withSigning(createFunctionCore(definition, { logger: functionLogger(definition, options) }), options);
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  return async (request) => {
    const headers: RequestHeaders = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const url = new URL(request.url);
    const out = await routeStandalone(core, limit, request.method, url.pathname + url.search, headers, (max) =>
      readLimited(request, max),
    );
    return new Response(out.body, { status: out.status, headers: out.headers });
  };
}
