// Waits at start-up until the API server answers at all (any HTTP status), retrying refused connections and
// silent servers up to a deadline, so a process that cannot reach its cluster fails with a clear message in
// bounded time instead of hanging or half-starting.
import { isApiError, type KubeClient } from './kube-client.ts';

export class ApiServerUnreachableError extends Error {
  override name = 'ApiServerUnreachableError';
}

export interface WaitForApiServerOptions {
  deadlineMs: number;
  /** Pause between attempts. */
  retryMs?: number;
  /** Named in the error ("https://10.0.0.1:6443"). */
  server?: string;
}

export async function waitForApiServer(client: KubeClient, options: WaitForApiServerOptions): Promise<void> {
  const deadline = Date.now() + options.deadlineMs;
  let last: unknown;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    try {
      // The signal bounds the connect and TLS handshake too, which timeoutMs (headers only) does not.
      const attemptMs = Math.max(1, Math.min(5_000, remaining));
      await client.request({ path: '/version', timeoutMs: attemptMs, signal: AbortSignal.timeout(attemptMs) });
      return;
    } catch (error) {
      // Any answer, even 401 or 403, means the server is there; what it refuses is for the caller to report.
      if (isApiError(error)) return;
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(options.retryMs ?? 1_000, Math.max(0, deadline - Date.now()))));
  }
  const failure = last as { code?: unknown; name?: unknown } | undefined;
  const silent = failure?.name === 'TimeoutError' || (typeof failure?.code === 'string' && /^UND_ERR_(CONNECT|HEADERS)_TIMEOUT$/.test(failure.code));
  const why = silent ? 'no answer' : last instanceof Error ? last.message : String(last);
  throw new ApiServerUnreachableError(`the API server${options.server ? ` at ${options.server}` : ''} did not answer within ${Math.round(options.deadlineMs / 1000)} s (last: ${why})`);
}
