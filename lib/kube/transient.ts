// Tells failures that clear up by themselves (the API server restarting, throttling, a cut connection)
// from the caller's mistakes, and retries an idempotent operation through the former for a bounded time.
import { Backoff, sleep, type BackoffPolicy } from './backoff.ts';
import { KubeApiError, KubeClientClosedError } from './kube-client.ts';

/** Socket-level failures: nothing was answered, so trying again is the only way to learn more. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET', // also "Client network socket disconnected before secure TLS connection was established"
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET', // "other side closed"
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH', // the answer cut mid-body
]);

/** Failures before a byte of the request left: the server cannot have acted on it. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
const TLS_NOT_ESTABLISHED = /before secure TLS connection was established/;

function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * True for throttling (429), server trouble (5xx: "storage is (re)initializing", "not all HTTP paths
 * installed" while the API server starts) and a connection refused or cut; false for every other answer
 * (a 4xx is about the request) and for errors such as an untrusted certificate, which retrying cannot fix.
 */
export function isTransientApiFailure(error: unknown): boolean {
  if (error instanceof KubeApiError) return error.statusCode === 429 || error.statusCode >= 500;
  const code = errorCode(error);
  return code !== undefined && TRANSIENT_CODES.has(code);
}

/**
 * True when a write may have taken effect although no answer said so: the connection broke after the
 * request could have been sent, or the API server timed out waiting for storage (504). A status the
 * server answered, a refused connection or a failed TLS handshake all mean it did not.
 */
export function mayHaveTakenEffect(error: unknown): boolean {
  if (error instanceof KubeApiError) return error.statusCode === 504 || error.reason === 'Timeout';
  if (error instanceof KubeClientClosedError) return error.inFlight;
  const code = errorCode(error);
  if (code !== undefined && NOT_SENT_CODES.has(code)) return false;
  return !(error instanceof Error && TLS_NOT_ESTABLISHED.test(error.message));
}

export interface RetryTransientOptions {
  /** Give up (rethrowing the last failure) once this much time has passed since the first attempt. */
  timeoutMs: number;
  backoff?: BackoffPolicy;
  /** Told about each transient failure before the wait, e.g. to print it. */
  onRetry?: (error: unknown, delayMs: number) => void;
  now?: () => number;
  wait?: (ms: number) => Promise<void>;
}

const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 250, maxMs: 4000, jitter: 0.2 };

/** Runs `operation` until it succeeds, fails for good, or transient failures outlast `timeoutMs`. */
export async function retryTransient<T>(operation: () => Promise<T>, options: RetryTransientOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const wait = options.wait ?? ((ms: number) => sleep(ms));
  const backoff = new Backoff(options.backoff ?? DEFAULT_BACKOFF);
  const deadline = now() + options.timeoutMs;
  for (;;) {
    try {
      return await operation();
    } catch (error) {
      const delayMs = backoff.next();
      if (!isTransientApiFailure(error) || now() + delayMs > deadline) throw error;
      options.onRetry?.(error, delayMs);
      await wait(delayMs);
    }
  }
}
