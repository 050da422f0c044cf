// The one HTTP client for calling functions, used by the router (reconcile) and the admission gateway:
// keep-alive pools per CA bundle and origin, closed when idle; connects only to allowed addresses
// (guarded-connect.ts); signs requests and checks signed replies; reads replies within a byte cap, a JSON
// value budget and a shared in-flight budget, all before JSON.parse; classifies every failure; and can open a
// function's connection ahead of its first call (preconnector.ts).
import type { IncomingHttpHeaders } from 'node:http';
import { Agent, errors as undiciErrors } from 'undici';
import { signRequest, verifyReply, type SigningKeys } from '../signing/webhook-signature.ts';
import { guardedConnector, type AddressGuard } from './guarded-connect.ts';
import { Preconnector } from './preconnector.ts';
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

/** A function to open a connection to: its URL and the CA bundle its calls trust. */
export interface FunctionOrigin {
  url: string;
  caBundle?: string | undefined;
}

export interface FunctionClient {
  call(call: FunctionCall): Promise<CallOutcome>;
  /**
   * Opens one connection to the origin ahead of its first call, through the address guard and with the CA bundle
   * (with no guard, nothing is opened). Never throws, never reports: a refusal or failure is the call's to meet.
   */
  preconnect(origin: FunctionOrigin): void;
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
    const ahead = options.addressGuard ? new Preconnector(guardedConnector(options.addressGuard, tls)) : undefined;
    // An Agent closes an origin's pool once its last connection goes (undici Agent), so origins no Loop
    // calls any more do not pile up; the Agent itself is closed by IdlePools.
    const agent = new Agent({
      connections: options.connections ?? DEFAULT_FUNCTION_CONNECTIONS,
      pipelining: 1,
      keepAliveTimeout: keepAliveMs,
      connect: ahead?.connector ?? tls,
    });
    return { agent, ahead };
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
          pools.get(request.caBundle).agent.dispatch(
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

  let closed = false;
  function preconnect(origin: FunctionOrigin): void {
    if (closed || !options.addressGuard) return;
    let url: URL;
    try {
      url = new URL(origin.url);
    } catch {
      return;
    }
    pools.get(origin.caBundle).ahead?.open(url);
  }

  return {
    call,
    preconnect,
    get openPools() {
      return pools.size;
    },
    close: () => {
      closed = true;
      return pools.closeAll();
    },
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

/** A CA bundle's Agent and the connector that opens its connections ahead (with an address guard only). */
interface Pool {
  agent: Agent;
  ahead: Preconnector | undefined;
}

/** One Agent per CA bundle, closed once nothing used it for `idleMs` (a Loop's caBundle changed or it went away). */
class IdlePools {
  readonly #agents = new Map<string, Pool & { users: number; lastUsed: number }>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly make: (ca: string | undefined) => Pool,
    private readonly idleMs: number,
  ) {}

  get size(): number {
    return this.#agents.size;
  }

  get(ca: string | undefined): Pool {
    return this.#entry(ca);
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
      entry = { ...this.make(ca), users: 0, lastUsed: Date.now() };
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
      entry.ahead?.close();
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
    const pools = [...this.#agents.values()];
    this.#agents.clear();
    for (const pool of pools) pool.ahead?.close();
    await Promise.all(pools.map((pool) => pool.agent.close()));
  }
}
