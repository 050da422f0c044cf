// The one HTTP client for calling functions, used by the router (reconcile) and the admission gateway:
// keep-alive pools per CA bundle and origin, closed when idle; connects only to allowed addresses
// (guarded-connect.ts); signs requests and checks signed replies; reads replies within a byte cap, a JSON
// value budget and a shared in-flight budget, all before JSON.parse; and classifies every failure.
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, errors as undiciErrors } from 'undici';
import { signRequest, verifyReply, type SigningKeys } from '../signing/webhook-signature.ts';
import { guardedConnector, type AddressGuard } from './guarded-connect.ts';
import { DEFAULT_REPLY_LIMITS, InFlightBytes, type ReplyLimits } from './reply-limits.ts';
import { ReplyReader, type ReplyRead } from './reply-reader.ts';

export interface FunctionCall {
  url: string;
  body: string;
  timeoutMs: number;
  /** More headers (CloudEvents attributes, traceparent); content-type is application/json unless given. */
  headers?: Record<string, string>;
  /** PEM CA certificates to trust for an https function URL. */
  caBundle?: string | undefined;
  /** Sign the request for `audience` and accept a 200 reply only signed for it (docs/contract.md). */
  signing?: { keys: SigningKeys; audience: string } | undefined;
  /** Requests a batch carries (default 1): the reply's byte and value limits are this many replies'. */
  replyItems?: number;
}

export type CallFailureReason = 'Unreachable' | 'AddressRefused' | 'Timeout' | 'TooLarge' | 'TooManyValues' | 'NotJson' | 'InvalidSignature' | 'Overloaded';

export type CallOutcome =
  /** A 200 whose body is JSON within the limits (and signed, when signing): `value` is parsed. */
  | { kind: 'reply'; status: 200; headers: IncomingHttpHeaders; value: unknown }
  /** Any other status. `detail` is the start of the body, for the log only (never status or events). */
  | { kind: 'status'; status: number; headers: IncomingHttpHeaders; detail: string }
  | { kind: 'failed'; reason: CallFailureReason; status?: number; message: string; /** The socket error's code (ECONNREFUSED). */ code?: string };

/** Connections per function origin unless told otherwise. */
export const DEFAULT_FUNCTION_CONNECTIONS = 64;

export interface FunctionClientOptions {
  /** Connections per function origin (DEFAULT_FUNCTION_CONNECTIONS). */
  connections?: number;
  limits?: Partial<ReplyLimits>;
  /** Shared by every call of this client: reply bytes being read and parsed at once. */
  inFlight?: InFlightBytes;
  /** Where calls may connect; without one, any address (unit tests of other layers only). */
  addressGuard?: AddressGuard;
  /** Keep-alive of idle connections; a CA bundle's pool with none left is closed after twice this. */
  keepAliveMs?: number;
}

export interface FunctionClient {
  call(call: FunctionCall): Promise<CallOutcome>;
  /** Pools (one per CA bundle) currently open: for tests and metrics. */
  readonly openPools: number;
  close(): Promise<void>;
}

export function createFunctionClient(options: FunctionClientOptions = {}): FunctionClient {
  const limits: ReplyLimits = { ...DEFAULT_REPLY_LIMITS, ...options.limits };
  const inFlight = options.inFlight ?? new InFlightBytes();
  const keepAliveMs = options.keepAliveMs ?? 30_000;
  const pools = new IdlePools((ca) => {
    const tls = ca === undefined ? {} : { ca };
    // An Agent closes an origin's pool once its last connection goes (undici Agent), so origins no Loop
    // calls any more do not pile up; the Agent itself is closed by IdlePools.
    return new Agent({
      connections: options.connections ?? DEFAULT_FUNCTION_CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: keepAliveMs,
      connect: options.addressGuard ? guardedConnector(options.addressGuard, tls) : tls,
    });
  }, keepAliveMs * 2);

  async function call(request: FunctionCall): Promise<CallOutcome> {
    const target = new URL(request.url);
    const signed = request.signing ? signRequest(request.signing.keys, request.signing.audience, request.body) : undefined;
    const release = pools.use(request.caBundle);
    const items = Math.max(1, request.replyItems ?? 1);
    const callLimits = items === 1 ? limits : { ...limits, maxBytes: limits.maxBytes * items, maxValues: limits.maxValues * items };
    let timer: NodeJS.Timeout | undefined;
    try {
      const read = await new Promise<ReplyRead>((settle) => {
        const reader = new ReplyReader(callLimits, inFlight, settle);
        // The whole call (connect, headers, every body chunk) has one deadline. AbortSignal.timeout's timer cannot
        // be cleared: it fired after every finished call and built a TimeoutError for nobody (~2 % of the router's CPU).
        timer = setTimeout(() => reader.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), request.timeoutMs);
        try {
          pools.get(request.caBundle).dispatch(
            {
              origin: target.origin,
              path: target.pathname + target.search,
              method: 'POST',
              headers: { 'content-type': 'application/json', ...request.headers, ...signed },
              body: request.body,
              headersTimeout: request.timeoutMs,
              bodyTimeout: request.timeoutMs,
            },
            reader,
          );
        } catch (error) {
          settle({ kind: 'error', error });
        }
      });
      switch (read.kind) {
        case 'error':
          return transportFailure(read.error, request.url, request.timeoutMs);
        case 'status':
          return { kind: 'status', status: read.status, headers: read.headers, detail: read.detail };
        case 'refused':
          return { kind: 'failed', reason: read.reason, status: 200, message: read.message };
      }
      try {
        if (signed && request.signing) {
          const check = verifyReply(request.signing.keys, request.signing.audience, signed['webhook-id'], read.headers, read.text);
          if (!check.ok) return { kind: 'failed', reason: 'InvalidSignature', status: 200, message: `reply signature refused: ${check.message} (nothing was applied)` };
        }
        let value: unknown;
        try {
          value = JSON.parse(read.text);
        } catch {
          return { kind: 'failed', reason: 'NotJson', status: 200, message: 'reply is not JSON' };
        }
        return { kind: 'reply', status: 200, headers: read.headers, value };
      } finally {
        read.release();
      }
    } catch (error) {
      return transportFailure(error, request.url, request.timeoutMs);
    } finally {
      clearTimeout(timer);
      release();
    }
  }

  return {
    call,
    get openPools() {
      return pools.size;
    },
    close: () => pools.closeAll(),
  };
}

export function transportFailure(error: unknown, url: string, timeoutMs: number): Extract<CallOutcome, { kind: 'failed' }> {
  const err = error as Error & { code?: string; cause?: { code?: string } };
  const timedOut =
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err?.name === 'TimeoutError' ||
    err?.code === 'UND_ERR_CONNECT_TIMEOUT';
  if (timedOut) return { kind: 'failed', reason: 'Timeout', message: `${url}: no reply within ${timeoutMs} ms` };
  if (err?.code === 'KUBELOOP_ADDRESS_REFUSED') return { kind: 'failed', reason: 'AddressRefused', message: err.message };
  const code = err?.code ?? err?.cause?.code;
  return { kind: 'failed', reason: 'Unreachable', message: `${url}: ${code ?? ''} ${err?.message ?? String(error)}`.trim(), ...(code ? { code } : {}) };
}

/** One Agent per CA bundle, closed once nothing used it for `idleMs` (a Loop's caBundle changed or it went away). */
class IdlePools {
  readonly #agents = new Map<string, { agent: Agent; users: number; lastUsed: number }>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly make: (ca: string | undefined) => Agent,
    private readonly idleMs: number,
  ) {}

  get size(): number {
    return this.#agents.size;
  }

  get(ca: string | undefined): Agent {
    return this.#entry(ca).agent;
  }

  /** Marks the pool in use until the returned function is called. */
  use(ca: string | undefined): () => void {
    const entry = this.#entry(ca);
    entry.users++;
    return () => {
      entry.users--;
      entry.lastUsed = Date.now();
    };
  }

  #entry(ca: string | undefined) {
    const key = ca ?? '';
    let entry = this.#agents.get(key);
    if (!entry) {
      entry = { agent: this.make(ca), users: 0, lastUsed: Date.now() };
      this.#agents.set(key, entry);
      this.#sweeper ??= setInterval(() => this.#sweep(), this.idleMs).unref();
    }
    return entry;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.#agents) {
      if (entry.users > 0 || now - entry.lastUsed < this.idleMs) continue;
      this.#agents.delete(key);
      void entry.agent.close().catch(() => undefined);
    }
    if (this.#agents.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const agents = [...this.#agents.values()].map((entry) => entry.agent);
    this.#agents.clear();
    await Promise.all(agents.map((agent) => agent.close()));
  }
}
