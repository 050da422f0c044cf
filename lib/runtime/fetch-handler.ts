// A reconcile function as a Web-standard fetch handler, (Request) => Promise<Response>, for FaaS platforms
// and runtimes without Node (Cloudflare Workers, Deno, Bun, Lambda adapters). Its imports stay portable:
// no fastify, pino, prom-client or node: modules (test/http/fetch-handler-imports.test.ts bundles it to check).
// Signed calls use Web Crypto (web-signature.ts), under the same rules and gate as the Node servers.
import type { LogLevel } from '../observability/logger.ts';
import type { AnyFunctionDefinition } from './function-kinds.ts';
import { DEFAULT_BODY_LIMIT_BYTES } from '../server/body-limit.ts';
import { consoleLogger } from './console-logger.ts';
import { createFunctionCore, type CoreLogger, type FunctionCore, type RequestHeaders } from './function-core.ts';
import { decodeSigningSecrets } from '../signing/standard-webhooks.ts';
import { importSigningSecrets, webSignReply, webVerifyRequest, type WebSigningKeys } from '../signing/web-signature.ts';
import { gateOnSignature, requestVerdict, type RequestVerdict } from './signature-gate.ts';
import { routeStandalone } from './standalone-routes.ts';

export interface FetchHandlerOptions {
  /** Defaults to JSON lines on `console` named "function/<name>" at `logLevel`. */
  logger?: CoreLogger;
  logLevel?: LogLevel;
  /** Default DEFAULT_BODY_LIMIT_BYTES (8 MiB). */
  bodyLimitBytes?: number;
  /**
   * The `whsec_…` secret (several space-separated while rotating, "whsec_new whsec_old"): requests must
   * carry a valid, fresh Standard Webhooks signature and replies are signed, with crypto.subtle HMAC-SHA256.
   * On Workers pass it from a secret binding (`env.KUBELOOP_SIGNING_SECRET`). Checked at once: a bad
   * secret throws here, not at the first request.
   */
  signingSecret?: string;
  /** The clock for signatures; tests pin it. */
  nowMs?: () => number;
  /** Wraps the core (instrumentation, tests); applied before the signature gate. */
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

/**
 * Web Crypto is asynchronous and the core is not: the body's signature is checked as it is read, the gate
 * then answers from that verdict, and the reply is signed once it is rendered.
 */
function signedRoute(core: FunctionCore, secret: string, now: () => number): Route {
  decodeSigningSecrets(secret);
  let imported: Promise<WebSigningKeys> | undefined;
  const keys = (): Promise<WebSigningKeys> => (imported ??= importSigningSecrets(secret));
  return async (limit, method, path, headers, read) => {
    let verdict: RequestVerdict = { ok: false, message: 'the request body was not read' };
    const gated = gateOnSignature(core, () => verdict, (reply) => reply);
    const out = await routeStandalone(gated, { bodyLimitBytes: limit }, method, path, headers, async (max) => {
      const body = await read(max);
      if (body !== undefined) verdict = requestVerdict(await webVerifyRequest(await keys(), headers, body, { nowMs: now() }));
      return body;
    });
    // Only the answer to a verified request is signed (signature-gate.ts: no signing oracle).
    const final = verdict as RequestVerdict;
    if (!final.ok) return out;
    const signature = await webSignReply(await keys(), final.audience, final.id, out.body, { nowMs: now() });
    return { ...out, headers: { ...out.headers, ...signature } };
  };
}

type Route = (limit: number, method: string, path: string, headers: RequestHeaders, read: (max: number) => Promise<string | undefined>) => ReturnType<typeof routeStandalone>;

export function toFetchHandler(definition: AnyFunctionDefinition, options: FetchHandlerOptions = {}): (request: Request) => Promise<Response> {
  const logger = options.logger ?? consoleLogger(`function/${definition.name}`, options.logLevel ?? 'info');
  const plain = createFunctionCore(definition, { logger });
  const core = options.wrapCore ? options.wrapCore(plain) : plain;
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const route: Route =
    options.signingSecret === undefined
      ? (max, method, path, headers, read) => routeStandalone(core, { bodyLimitBytes: max }, method, path, headers, read)
      : signedRoute(core, options.signingSecret, options.nowMs ?? Date.now);
  return async (request) => {
    const headers: RequestHeaders = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const url = new URL(request.url);
    const out = await route(limit, request.method, url.pathname + url.search, headers, (max) => readLimited(request, max));
    return new Response(out.body, { status: out.status, headers: out.headers });
  };
}
