// Routing shared by the framework-free handlers (fetch, Node and the node:http server the images run), so
// they answer exactly like the fastify server (function-server.ts), method by method; its ops routes serve the
// router's ops server too (lib/server/ops-server.ts).
import type { FunctionCore, RequestHeaders } from './function-core.ts';
import type { MetricsView } from '../observability/metrics.ts';
import { errorReply, jsonReply, methodNotAllowed, tooLargeMessage, type CoreReply } from './http-replies.ts';

/** Reads the body up to `limitBytes`; returns undefined when it is larger. */
export type BodyReader = (limitBytes: number) => Promise<string | undefined>;

export interface StandaloneRoutes {
  bodyLimitBytes: number;
  /** The metrics for a request's Accept header (served by the node:http servers before routing, metricsRequest); absent in the fetch handler (no prom-client there), so /metrics is 404. */
  metrics?: (accept: string | undefined) => MetricsView;
  /** GET /readyz answers 503 while this is false (shutdown began); ready when absent. */
  ready?: () => boolean;
}

/**
 * The methods fastify routes to the 405 answer on a function path (function-server.ts), HEAD included as
 * fastify exposes a HEAD route for every GET one; any other method but POST finds no route there (404).
 */
const NOT_ALLOWED = new Set(['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

function decodedPath(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}

/** fastify's answer to a path with a bad percent escape, word for word. */
function badUrl(path: string): CoreReply {
  const body = { error: 'Bad Request', code: 'FST_ERR_BAD_URL', message: `'${path}' is not a valid url component`, statusCode: 400 };
  return { status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** A request's path as fastify routes it: without its query, percent-decoded; a bad escape gets fastify's 400. */
export function requestPath(url: string): string | CoreReply {
  const query = url.indexOf('?');
  const raw = query === -1 ? url : url.slice(0, query);
  // fastify's router matches the percent-decoded path ("/reconcil%65" is /reconcile) and refuses a bad escape.
  const path = raw.includes('%') ? decodedPath(raw) : raw;
  return path ?? badUrl(raw);
}

/** GET (and HEAD) /healthz and /readyz as the fastify bootstrap serves them; undefined for any other request. */
export function opsRoute(routes: Pick<StandaloneRoutes, 'ready'>, method: string, path: string): CoreReply | undefined {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  // A HEAD request gets the GET answer's status and headers; Node and Web Responses drop its body.
  if (path === '/healthz') return jsonReply(200, { status: 'ok' });
  if (path === '/readyz') {
    const ready = routes.ready?.() ?? true;
    return jsonReply(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready' });
  }
  return undefined;
}

/** The metrics a GET or HEAD /metrics asks for, when `routes` serves them; the page streams (lib/server/metrics-reply.ts). */
export function metricsRequest(routes: Pick<StandaloneRoutes, 'metrics'>, method: string, url: string, headers: RequestHeaders): MetricsView | undefined {
  if ((method !== 'GET' && method !== 'HEAD') || !routes.metrics || requestPath(url) !== '/metrics') return undefined;
  return routes.metrics(typeof headers.accept === 'string' ? headers.accept : undefined);
}

/** fastify's answer to a request no route takes. */
export function noRoute(method: string, url: string): CoreReply {
  return errorReply(404, 'NotFound', `no route ${method} ${url}`);
}

export async function routeStandalone(
  core: FunctionCore,
  routes: StandaloneRoutes,
  method: string,
  url: string,
  headers: RequestHeaders,
  readBody: BodyReader,
): Promise<CoreReply> {
  const path = requestPath(url);
  if (typeof path !== 'string') return path;
  const limit = routes.bodyLimitBytes;
  if (core.paths.includes(path)) {
    if (method === 'POST') {
      const declared = Number(headers['content-length']);
      if (Number.isFinite(declared) && declared > limit) return core.reject(413, 'PayloadTooLarge', tooLargeMessage(limit), headers);
      const body = await readBody(limit);
      if (body === undefined) return core.reject(413, 'PayloadTooLarge', tooLargeMessage(limit), headers);
      return core.handle({ headers, body });
    }
    if (NOT_ALLOWED.has(method)) return methodNotAllowed(method, path, core.requestKind);
    return noRoute(method, url);
  }
  return opsRoute(routes, method, path) ?? noRoute(method, url);
}
