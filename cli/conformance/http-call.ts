// One HTTP exchange of `kubeloop conformance`: sends a request (signed as the router signs it, or with the
// signature a case forges), reads the reply, and offers the checks every case shares.
import { request } from 'undici';
import { verifyReplySignature } from '../../lib/signing/reply-signature.ts';
import { signatureHeaders, type SignatureHeaders, type SigningKeys } from '../../lib/signing/webhook-signature.ts';

export interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The webhook-id the request was signed with, when it was. */
  signedId?: string;
}

export interface CallTarget {
  /** The function's POST URL as given (http://host:8080/). */
  url: string;
  timeoutMs: number;
  signingKeys?: SigningKeys;
}

/** A case that did not hold: the message says what was expected and what came back. */
export class CaseFailure extends Error {}

export interface SendOptions {
  method?: string;
  /** A path on the function's origin instead of its URL (probes). */
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Signature headers to send instead of the router's; `false` sends none even with a key. */
  signature?: SignatureHeaders | false;
}

export async function send(target: CallTarget, options: SendOptions): Promise<Exchange> {
  const method = options.method ?? 'POST';
  const url = options.path === undefined ? target.url : new URL(options.path, target.url).toString();
  const body = options.body;
  let signature: SignatureHeaders | undefined;
  if (options.signature) signature = options.signature;
  else if (options.signature === undefined && target.signingKeys && body !== undefined) signature = signatureHeaders(target.signingKeys, body);
  try {
    const reply = await request(url, {
      method,
      headers: { ...options.headers, ...signature },
      ...(body === undefined ? {} : { body }),
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    });
    const text = await reply.body.text();
    return { status: reply.statusCode, headers: reply.headers, text, ...(signature ? { signedId: signature['webhook-id'] } : {}) };
  } catch (error) {
    const err = error as Error & { code?: string };
    const timedOut = err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT';
    throw new CaseFailure(timedOut ? `${method} ${url}: no answer within ${target.timeoutMs} ms` : `${method} ${url} failed: ${err.code ?? ''} ${err.message}`.trim());
  }
}

export function header(exchange: Exchange, name: string): string | undefined {
  const value = exchange.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

const shown = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}…` : text);

export function parseJson(exchange: Exchange, what: string): unknown {
  try {
    return JSON.parse(exchange.text) as unknown;
  } catch {
    throw new CaseFailure(`${what} is not JSON: ${shown(exchange.text)}`);
  }
}

/** A 200 whose signature the router would accept (when signing is on). */
export function expectSuccess(target: CallTarget, exchange: Exchange): void {
  if (exchange.status !== 200) throw new CaseFailure(`want 200, got HTTP ${exchange.status}: ${shown(exchange.text)}`);
  if (target.signingKeys && exchange.signedId !== undefined) {
    const verdict = verifyReplySignature(target.signingKeys, exchange.signedId, exchange.headers, exchange.text);
    if (!verdict.ok) throw new CaseFailure(`the router would refuse this reply: ${verdict.message}`);
  }
}

/**
 * An error reply as the contract words it: the status, a JSON body {statusCode, code, message} with the
 * expected code (any of `codes`), and, for a reconcile-path error, the x-kubeloop-reconcile-id header.
 */
export function expectError(exchange: Exchange, status: number | '4xx', codes: readonly string[], options: { reconcileIdHeader?: boolean } = {}): string {
  const statusOk = status === '4xx' ? exchange.status >= 400 && exchange.status < 500 : exchange.status === status;
  if (!statusOk) throw new CaseFailure(`want ${status} ${codes.join(' or ')}, got HTTP ${exchange.status}: ${shown(exchange.text)}`);
  const body = parseJson(exchange, `the ${exchange.status} reply`) as { statusCode?: unknown; code?: unknown; message?: unknown } | null;
  if (typeof body?.code !== 'string' || !codes.includes(body.code)) {
    throw new CaseFailure(`want an error body with code ${codes.join(' or ')}, got ${shown(exchange.text)}`);
  }
  if (typeof body.message !== 'string' || body.message === '') throw new CaseFailure(`the ${body.code} reply has no message`);
  if (body.statusCode !== exchange.status) throw new CaseFailure(`the error body's statusCode ${String(body.statusCode)} is not the HTTP status ${exchange.status}`);
  if (options.reconcileIdHeader !== false && header(exchange, 'x-kubeloop-reconcile-id') === undefined) {
    throw new CaseFailure('the error reply lacks the x-kubeloop-reconcile-id header');
  }
  return `${exchange.status} ${body.code}: ${body.message}`;
}
