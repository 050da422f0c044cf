// One HTTP exchange of `kubeloop conformance`: sends a request (signed as the router signs it, or with the
// signature a case forges), reads the reply, and offers the checks every case shares.
import { request } from 'undici';
import { directionKeys, signRequest, verify, verifyReply, type SigningKeys } from '../../lib/signing/webhook-signature.ts';

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
  /** Whom requests are signed for (x-kubeloop-audience): the sample's Loop or hook (audienceOf). */
  audience: string;
}

/** A case that did not hold: the message says what was expected and what came back. */
export class CaseFailure extends Error {}

export interface SendOptions {
  method?: string;
  /** A path on the function's origin instead of its URL (probes). */
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Signature headers (and audience) to send instead of the router's; `false` sends none even with a key. */
  signature?: Record<string, string> | false;
}

export async function send(target: CallTarget, options: SendOptions): Promise<Exchange> {
  const method = options.method ?? 'POST';
  const url = options.path === undefined ? target.url : new URL(options.path, target.url).toString();
  const body = options.body;
  let signature: Record<string, string> | undefined;
  if (options.signature) signature = options.signature;
  else if (options.signature === undefined && target.signingKeys && body !== undefined) signature = signRequest(target.signingKeys, target.audience, body);
  try {
    const reply = await request(url, {
      method,
      headers: { ...options.headers, ...signature },
      ...(body === undefined ? {} : { body }),
      headersTimeout: target.timeoutMs,
      bodyTimeout: target.timeoutMs,
    });
    const text = await reply.body.text();
    const signedId = signature?.['webhook-id'];
    return { status: reply.statusCode, headers: reply.headers, text, ...(signedId !== undefined ? { signedId } : {}) };
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

/** A 200 whose signature the router would accept (when signing is on): the same check as the router's client. */
export function expectSuccess(target: CallTarget, exchange: Exchange): void {
  if (exchange.status !== 200) throw new CaseFailure(`want 200, got HTTP ${exchange.status}: ${shown(exchange.text)}`);
  if (target.signingKeys && exchange.signedId !== undefined) {
    const verdict = verifyReply(target.signingKeys, target.audience, exchange.signedId, exchange.headers, exchange.text);
    if (!verdict.ok) throw new CaseFailure(`the router would refuse this reply: reply signature refused: ${verdict.message}${misused(target.signingKeys, target.audience, exchange)}`);
  }
}

/** Why a refused reply signature does not match, when it is one of the keys a function may wrongly use. */
function misused(keys: SigningKeys, audience: string, exchange: Exchange): string {
  if (verify(directionKeys(keys, 'request', audience), exchange.headers, exchange.text).ok) return ` (it is signed with the request key; replies are signed with the reply key of ${audience})`;
  if (verify(keys, exchange.headers, exchange.text).ok) return ` (it is signed with the secret's own key; replies are signed with the reply key derived for ${audience})`;
  return '';
}

/** A refusal must carry no signature: a signed refusal would sign any webhook-id a caller asks for. */
export function expectUnsigned(exchange: Exchange): void {
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    if (header(exchange, name) !== undefined) throw new CaseFailure(`the ${exchange.status} refusal carries ${name}; refusals are never signed (a signing oracle)`);
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
