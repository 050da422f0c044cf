// Dispatch: POSTs a ReconcileRequest to a function over HTTP (undici pool, CloudEvents binary mode) and
// classifies the answer: ok, throttled (429 + Retry-After), failed (5xx, timeout, unreachable, garbage)
// or rejected (4xx: the request itself is wrong; retrying will not help). With a signing key, requests are
// signed and a 200 reply is accepted only with a valid signature over the request's webhook-id.
import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { Agent, errors as undiciErrors } from 'undici';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../lib/contract/json-depth.ts';
import { validateReconcileResponse } from '../../lib/contract/validate.ts';
import { verifyReplySignature } from '../../lib/signing/reply-signature.ts';
import { signatureHeaders, type SigningKeys } from '../../lib/signing/webhook-signature.ts';
import { CLOUDEVENT_TYPE, type ReconcileRequest, type ReconcileResponse } from '../../lib/contract/types.ts';
import { serviceAddressLookup, type ServiceAddressOverride } from '../base/service-address.ts';

export type DispatchResult =
  | { kind: 'ok'; status: number; response: ReconcileResponse }
  | { kind: 'throttled'; status: 429; retryAfterMs: number | undefined; message: string }
  | { kind: 'failed'; status: number | undefined; reason: 'Unreachable' | 'Timeout' | 'ServerError' | 'InvalidResponse' | 'InvalidSignature'; message: string }
  | { kind: 'rejected'; status: number; message: string };

export interface InvokeOptions {
  url: string;
  timeoutMs: number;
  /** Sign requests and require signed replies (the Loop's spec.function.signingSecretRef). */
  signingKey?: SigningKeys;
  /** PEM CA certificates to trust for an https function URL (spec.function.caBundle). */
  caBundle?: string;
  /** Sent as they are: the trace context (traceparent, tracestate, ce-traceparent). */
  headers?: Record<string, string>;
}

/** How the router reaches a function: over HTTP (createHttpInvoker), or in-process in benchmarks. */
export type FunctionInvoker = (request: ReconcileRequest, options: InvokeOptions) => Promise<DispatchResult>;

/** A reply may ask for at most this many actions unless configured otherwise; more is InvalidResponse. */
export const DEFAULT_MAX_ACTIONS_PER_REPLY = 1000;
/** 16 MiB: far above any sane reply, far below what would hurt the router's memory. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Classifies a function's HTTP answer; pure, so every branch is unit-tested. */
export function classifyResponse(status: number, body: string, retryAfter?: string | string[], maxActions = DEFAULT_MAX_ACTIONS_PER_REPLY): DispatchResult {
  if (status === 429) return { kind: 'throttled', status, retryAfterMs: parseRetryAfter(retryAfter), message: snippet(body) };
  if (status >= 500) return { kind: 'failed', status, reason: 'ServerError', message: `HTTP ${status}: ${snippet(body)}` };
  if (status >= 400) return { kind: 'rejected', status, message: `HTTP ${status}: ${snippet(body)}` };
  if (status !== 200) return { kind: 'failed', status, reason: 'InvalidResponse', message: `HTTP ${status}: only 200 carries a ReconcileResponse` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'failed', status, reason: 'InvalidResponse', message: `reply is not JSON: ${snippet(body)}` };
  }
  // Counted before schema validation, so a reply of 200,000 actions costs a length check, not a walk.
  const actions = (parsed as { actions?: unknown } | null)?.actions;
  if (Array.isArray(actions) && actions.length > maxActions) {
    return { kind: 'failed', status, reason: 'InvalidResponse', message: `reply has ${actions.length} actions; at most ${maxActions} are accepted per reply (nothing was applied)` };
  }
  if (nestsDeeperThan(parsed)) return { kind: 'failed', status, reason: 'InvalidResponse', message: `reply nests deeper than ${MAX_JSON_DEPTH} levels` };
  const validation = validateReconcileResponse(parsed);
  if (!validation.ok) {
    return { kind: 'failed', status, reason: 'InvalidResponse', message: `reply is not a ReconcileResponse: ${validation.errors.slice(0, 5).join('; ')}` };
  }
  return { kind: 'ok', status, response: validation.value };
}

function snippet(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 300 ? `${oneLine.slice(0, 300)}...` : oneLine;
}

export interface HttpInvokerOptions {
  /** Connections per function origin. */
  connections?: number;
  /** Reply size limit, counted as the reply streams in; a bigger reply is garbage, not a reason to run out of memory. */
  maxResponseBytes?: number;
  /** A router outside the cluster: connect to this address for cluster Service hosts (service-address.ts). */
  serviceAddress?: ServiceAddressOverride;
  /** Most actions one reply may ask for (default DEFAULT_MAX_ACTIONS_PER_REPLY). */
  maxActionsPerReply?: number;
}

/** Reads a reply body up to `maxBytes`, counting as it streams; a larger one is cut off at the limit. */
export async function readBounded(body: Readable, maxBytes: number): Promise<{ text: string } | { tooLarge: true }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop destroys the stream (and the connection): the rest is never read.
    if (size > maxBytes) return { tooLarge: true };
    chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks, size).toString('utf8') };
}

/** Checks a 200 reply's signature; the reply must be signed for this request (its webhook-id). */
export function checkReplySignature(key: SigningKeys, requestId: string, headers: Record<string, string | string[] | undefined>, body: string): DispatchResult | undefined {
  const verdict = verifyReplySignature(key, requestId, headers, body);
  return verdict.ok ? undefined : { kind: 'failed', status: 200, reason: 'InvalidSignature', message: `${verdict.message} (nothing was applied)` };
}

/** An invoker backed by undici Agents (a keep-alive pool per function origin; one Agent per CA bundle). */
export function createHttpInvoker(options: HttpInvokerOptions = {}): FunctionInvoker & { close(): Promise<void> } {
  const connect = options.serviceAddress ? { lookup: serviceAddressLookup(options.serviceAddress) } : undefined;
  const agentOptions = { connections: options.connections ?? 64, keepAliveTimeout: 30_000, pipelining: 1 };
  const agent = new Agent({ ...agentOptions, ...(connect ? { connect } : {}) });
  const caAgents = new Map<string, Agent>();
  const agentFor = (ca: string | undefined): Agent => {
    if (ca === undefined) return agent;
    let found = caAgents.get(ca);
    if (!found) caAgents.set(ca, (found = new Agent({ ...agentOptions, connect: { ca, ...connect } })));
    return found;
  };
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxActions = options.maxActionsPerReply ?? DEFAULT_MAX_ACTIONS_PER_REPLY;
  const invoke = async (request: ReconcileRequest, { url, timeoutMs, signingKey, caBundle, headers: extraHeaders }: InvokeOptions): Promise<DispatchResult> => {
    const target = new URL(url);
    const body = JSON.stringify(request);
    // Each attempt gets its own id and timestamp; the reply must carry the same id.
    const signed = signingKey ? signatureHeaders(signingKey, body) : undefined;
    try {
      const response = await agentFor(caBundle).request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          // CloudEvents binary mode: the body stays a plain ReconcileRequest.
          'ce-specversion': '1.0',
          'ce-id': request.reconcileId ?? randomUUID(),
          'ce-source': `/kubeloop/router/loops/${request.loop}`,
          'ce-type': CLOUDEVENT_TYPE,
          ...extraHeaders,
          ...signed,
        },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const length = Number(response.headers['content-length'] ?? 0);
      const read = length > maxBytes ? ({ tooLarge: true } as const) : await readBounded(response.body, maxBytes);
      if ('tooLarge' in read) {
        response.body.destroy();
        return { kind: 'failed', status: response.statusCode, reason: 'InvalidResponse', message: `reply is larger than ${maxBytes} bytes; cut off at the limit` };
      }
      if (signed && response.statusCode === 200) {
        const refused = checkReplySignature(signingKey!, signed['webhook-id'], response.headers, read.text);
        if (refused) return refused;
      }
      return classifyResponse(response.statusCode, read.text, response.headers['retry-after'], maxActions);
    } catch (error) {
      return classifyTransportError(error, url, timeoutMs);
    }
  };
  return Object.assign(invoke, { close: () => Promise.all([agent, ...caAgents.values()].map((a) => a.close())).then(() => undefined) });
}

export function classifyTransportError(error: unknown, url: string, timeoutMs: number): DispatchResult {
  const err = error as Error & { code?: string; name?: string };
  const timedOut =
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err?.name === 'TimeoutError' ||
    err?.code === 'UND_ERR_CONNECT_TIMEOUT';
  if (timedOut) return { kind: 'failed', status: undefined, reason: 'Timeout', message: `${url}: no reply within ${timeoutMs} ms` };
  return { kind: 'failed', status: undefined, reason: 'Unreachable', message: `${url}: ${err?.code ?? ''} ${err?.message ?? String(error)}`.trim() };
}
