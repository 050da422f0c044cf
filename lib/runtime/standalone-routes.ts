// Routing shared by the framework-free handlers (fetch and Node), so they answer exactly like the fastify server.
import type { FunctionCore, RequestHeaders } from './function-core.ts';
import { errorReply, jsonReply, methodNotAllowed, tooLargeMessage, type CoreReply } from './http-replies.ts';

/** Reads the body up to `limitBytes`; returns undefined when it is larger. */
export type BodyReader = (limitBytes: number) => Promise<string | undefined>;

/** What GET /metrics serves: a prom-client Registry fits. Absent in the fetch handler (no prom-client there). */
export interface MetricsEndpoint {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export async function routeStandalone(
  core: FunctionCore,
  bodyLimitBytes: number,
  method: string,
  url: string,
  headers: RequestHeaders,
  readBody: BodyReader,
  metrics?: MetricsEndpoint,
): Promise<CoreReply> {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (core.paths.includes(path)) {
    if (method !== 'POST') return methodNotAllowed(method, path, core.requestKind);
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > bodyLimitBytes) {
      return core.reject(413, 'PayloadTooLarge', tooLargeMessage(bodyLimitBytes), headers);
    }
    const body = await readBody(bodyLimitBytes);
    if (body === undefined) return core.reject(413, 'PayloadTooLarge', tooLargeMessage(bodyLimitBytes), headers);
    return core.handle({ headers, body });
  }
  if (method === 'GET' && path === '/healthz') return jsonReply(200, { status: 'ok' });
  if (method === 'GET' && path === '/readyz') return jsonReply(200, { status: 'ready' });
  if (method === 'GET' && path === '/metrics' && metrics) {
    return { status: 200, headers: { 'content-type': metrics.contentType }, body: await metrics.metrics() };
  }
  return errorReply(404, 'NotFound', `no route ${method} ${url}`);
}
