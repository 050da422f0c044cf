// POSTs AdmissionRequests to admission functions over one undici keep-alive pool per function origin
// (no TLS or TCP handshake per admission), and classifies every way a call can fail.
import { Pool, errors } from 'undici';
import type { AdmissionRequest } from '../lib/contract/admission-types.ts';
import { REFUSAL_STATUSES, type CallFailure } from './hook-review.ts';

export type CallResult = { ok: true; reply: unknown } | { ok: false; failure: CallFailure };

const MAX_REPLY_BYTES = 8 * 1024 * 1024;

function describeError(error: unknown, timeoutMs: number): CallFailure {
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || (error as Error).name === 'TimeoutError') {
    return { kind: 'Timeout', message: `did not answer within ${timeoutMs} ms` };
  }
  const code = (error as { code?: string }).code ?? (error as { cause?: { code?: string } }).cause?.code;
  const text = error instanceof Error ? error.message : String(error);
  return { kind: 'Unreachable', message: `is unreachable (${code ?? text})` };
}

export class FunctionCaller {
  readonly #pools = new Map<string, Pool>();

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      // Admissions are small and latency-bound: keep connections warm for a minute between bursts.
      pool = new Pool(origin, { connections: 64, pipelining: 1, keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  /** `headers`: sent as they are (the trace context: traceparent, tracestate). */
  async call(url: string, request: AdmissionRequest, timeoutMs: number, headers: Record<string, string> = {}): Promise<CallResult> {
    const target = new URL(url);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const reply = await this.#pool(target.origin).request({
        method: 'POST',
        path: `${target.pathname}${target.search}`,
        headers: { ...headers, 'content-type': 'application/json', 'x-kubeloop-reconcile-id': request.uid },
        body: JSON.stringify(request),
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const declared = Number(reply.headers['content-length']);
      if (Number.isFinite(declared) && declared > MAX_REPLY_BYTES) {
        await reply.body.dump();
        return { ok: false, failure: { kind: 'InvalidResponse', message: `answered ${declared} bytes, more than the ${MAX_REPLY_BYTES} allowed` } };
      }
      const text = await reply.body.text();
      if (reply.statusCode !== 200) {
        const detail = messageOf(text) ?? text.slice(0, 200);
        const kind = REFUSAL_STATUSES.has(reply.statusCode) ? 'Refused' : 'ErrorStatus';
        return { ok: false, failure: { kind, message: `answered HTTP ${reply.statusCode}${detail ? `: ${detail}` : ''}` } };
      }
      try {
        return { ok: true, reply: JSON.parse(text) as unknown };
      } catch {
        return { ok: false, failure: { kind: 'InvalidResponse', message: `answered a body that is not JSON: ${JSON.stringify(text.slice(0, 80))}` } };
      }
    } catch (error) {
      return { ok: false, failure: describeError(error, timeoutMs) };
    }
  }

  /** Drops the pool of a function no hook uses any more. */
  async forget(origins: Set<string>): Promise<void> {
    for (const [origin, pool] of this.#pools) {
      if (origins.has(origin)) continue;
      this.#pools.delete(origin);
      await pool.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.destroy()));
    this.#pools.clear();
  }
}

/** The runtime's error replies carry { message }; show that rather than raw JSON. */
function messageOf(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    return typeof body.message === 'string' ? body.message : undefined;
  } catch {
    return undefined;
  }
}
