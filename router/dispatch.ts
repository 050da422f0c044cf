// Dispatch: POSTs a ReconcileRequest to a function over HTTP (undici pool, CloudEvents binary mode) and
// classifies the answer: ok, throttled (429 + Retry-After), failed (5xx, timeout, unreachable, garbage)
// or rejected (4xx: the request itself is wrong; retrying will not help).
import { randomUUID } from 'node:crypto';
import { Agent, errors as undiciErrors } from 'undici';
import { validateReconcileResponse } from '../lib/contract/validate.ts';
import { CLOUDEVENT_TYPE, type ReconcileRequest, type ReconcileResponse } from '../lib/contract/types.ts';

export type DispatchResult =
  | { kind: 'ok'; status: number; response: ReconcileResponse }
  | { kind: 'throttled'; status: 429; retryAfterMs: number | undefined; message: string }
  | { kind: 'failed'; status: number | undefined; reason: 'Unreachable' | 'Timeout' | 'ServerError' | 'InvalidResponse'; message: string }
  | { kind: 'rejected'; status: number; message: string };

/** How the router reaches a function: over HTTP (createHttpInvoker), or in-process in benchmarks. */
export type FunctionInvoker = (request: ReconcileRequest, options: { url: string; timeoutMs: number }) => Promise<DispatchResult>;

export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw.trim() === '') return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Classifies a function's HTTP answer; pure, so every branch is unit-tested. */
export function classifyResponse(status: number, body: string, retryAfter?: string | string[]): DispatchResult {
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
  /** Reply size limit; a bigger reply is garbage, not a reason to run out of memory. */
  maxResponseBytes?: number;
}

/** An invoker backed by one undici Agent (a keep-alive pool per function origin). */
export function createHttpInvoker(options: HttpInvokerOptions = {}): FunctionInvoker & { close(): Promise<void> } {
  const agent = new Agent({ connections: options.connections ?? 64, keepAliveTimeout: 30_000, pipelining: 1 });
  const maxBytes = options.maxResponseBytes ?? 16 * 1024 * 1024;
  const invoke = async (request: ReconcileRequest, { url, timeoutMs }: { url: string; timeoutMs: number }): Promise<DispatchResult> => {
    const target = new URL(url);
    try {
      const response = await agent.request({
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
        },
        body: JSON.stringify(request),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const length = Number(response.headers['content-length'] ?? 0);
      if (length > maxBytes) {
        response.body.destroy();
        return { kind: 'failed', status: response.statusCode, reason: 'InvalidResponse', message: `reply of ${length} bytes exceeds ${maxBytes}` };
      }
      const body = await response.body.text();
      return classifyResponse(response.statusCode, body, response.headers['retry-after']);
    } catch (error) {
      return classifyTransportError(error, url, timeoutMs);
    }
  };
  return Object.assign(invoke, { close: () => agent.close() });
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
