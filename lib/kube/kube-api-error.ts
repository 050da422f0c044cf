// The errors of KubeClient: an answer that is not a success (KubeApiError, with the Status reason and
// Retry-After), built the same way whichever transport carried it (undici, node:http2), and a request its client's
// close() or destroy() cut short or refused (KubeClientClosedError).

/**
 * An error that is an expected answer (a 409, a failed resourceVersion test), not a bug: it captures no stack,
 * which would show only the reply handling, and capturing one per conflict was 2 % of the router's CPU with
 * live pods (bench:router profile).
 */
export class AnswerError extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

/** A non-2xx answer from the API server, carrying its Status reason (NotFound, Conflict, AlreadyExists...). */
export class KubeApiError extends AnswerError {
  constructor(
    readonly statusCode: number,
    readonly reason: string,
    message: string,
    readonly request: { method: string; path: string },
    readonly retryAfterSeconds?: number,
  ) {
    super(`${request.method} ${request.path}: ${statusCode} ${reason}: ${message}`);
    this.name = 'KubeApiError';
  }
}

/**
 * A request the KubeClient's close() or destroy() cut short (`inFlight`: it may have taken effect) or refused (it was
 * never sent). Never retried (lib/kube/transient.ts): the caller decides; a stopping process usually lets it go.
 * `cause` is the transport's own failure (undici's, node:http2's), when there was one.
 */
export class KubeClientClosedError extends Error {
  readonly code = 'ERR_KUBELOOP_CLIENT_CLOSED';

  constructor(
    request: { method?: string; path: string },
    readonly inFlight: boolean,
    options?: ErrorOptions,
  ) {
    super(`${request.method ?? 'GET'} ${request.path}: ${inFlight ? 'cut short: its KubeClient was closed while it was in flight' : 'not sent: its KubeClient is closed'}`, options);
    this.name = 'KubeClientClosedError';
  }
}

export function isApiError(error: unknown, statusCode?: number): error is KubeApiError {
  return error instanceof KubeApiError && (statusCode === undefined || error.statusCode === statusCode);
}

/** A non-2xx answer as a KubeApiError: the Status object's reason and message, and Retry-After (429). */
export function apiError(request: { method?: string; path: string }, response: { statusCode: number; headers: Record<string, string | string[] | undefined> }, text: string): KubeApiError {
  let reason = 'Unknown';
  let message = text.slice(0, 500);
  try {
    const status = JSON.parse(text) as { reason?: string; message?: string };
    reason = status.reason ?? reason;
    message = status.message ?? message;
  } catch {
    // Not a Status object (a proxy error page, say): keep the raw text.
  }
  const retryAfter = Number(response.headers['retry-after']);
  return new KubeApiError(
    response.statusCode,
    reason,
    message,
    { method: request.method ?? 'GET', path: request.path },
    Number.isFinite(retryAfter) ? retryAfter : undefined,
  );
}
