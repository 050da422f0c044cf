// A reconcile function as a Web-standard fetch handler, (Request) => Promise<Response>, for FaaS platforms
// and runtimes without Node (Cloudflare Workers, Deno, Bun, Lambda adapters). Its imports stay portable:
// no fastify, pino, prom-client or node: modules (test/http/fetch-handler-imports.test.ts bundles it to check).
import type { LogLevel } from '../observability/logger.ts';
import type { AnyFunctionDefinition } from './function-kinds.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from '../server/body-limit.ts';
import { consoleLogger } from './console-logger.ts';
import { createFunctionCore, type CoreLogger, type FunctionCore, type RequestHeaders } from './function-core.ts';
import { routeStandalone } from './standalone-routes.ts';

export interface FetchHandlerOptions {
  /** Defaults to JSON lines on `console` named "function/<name>" at `logLevel`. */
  logger?: CoreLogger;
  logLevel?: LogLevel;
  /** Default DEFAULT_BODY_LIMIT_BYTES (8 MiB). */
  bodyLimitBytes?: number;
  /**
   * Wraps the core, e.g. `(core) => withSigning(core, { signingSecret })` from the runtime's Node entry for
   * signed calls. A hook rather than an option because signing uses node:crypto, and this module must stay
   * importable where no Node built-in exists (Workers); Deno, Bun and Lambda have node:crypto.
   */
  wrapCore?: (core: FunctionCore) => FunctionCore;
}

async function readLimited(request: Request, limitBytes: number): Promise<string | undefined> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel();
      return undefined;
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

export function toFetchHandler(definition: AnyFunctionDefinition, options: FetchHandlerOptions = {}): (request: Request) => Promise<Response> {
  const logger = options.logger ?? consoleLogger(`function/${definition.name}`, options.logLevel ?? 'info');
  const plain = createFunctionCore(definition, { logger });
  const core = options.wrapCore ? options.wrapCore(plain) : plain;
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
