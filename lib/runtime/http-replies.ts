// Replies every transport of the function runtime sends alike, outside the core's reconcile path.

/** The body of every error reply, so clients (the router, kubectl users) read one shape. */
export interface ErrorReply {
  statusCode: number;
  /** A stable, machine-readable reason, e.g. "FST_ERR_CTP_BODY_TOO_LARGE", "InvalidRequest", "InternalError". */
  code: string;
  message: string;
  /** For 5xx: the id under which the error was logged. */
  errorId?: string;
}

/** What the core and every transport answer with, before the transport writes it out. */
export interface CoreReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const RECONCILE_PATHS = ['/', '/reconcile'] as const;
export const ADMIT_PATHS = ['/', '/admit'] as const;

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

export function jsonReply(status: number, body: unknown): CoreReply {
  return { status, headers: JSON_TYPE, body: JSON.stringify(body) };
}

export function errorReply(status: number, code: string, message: string): CoreReply {
  const body: ErrorReply = { statusCode: status, code, message };
  return jsonReply(status, body);
}

/**
 * The body of a request that failed on the server's side, logged once under an id the body names (the fastify
 * bootstrap's answer, create-server.ts, and the node:http servers' alike). The Web global's randomUUID, loaded on
 * first use: a function image loads no node:crypto at start (images.test.ts).
 */
export function failedRequestBody(log: { error(object: object, message: string): void }, error: unknown, statusCode = 500): ErrorReply {
  const errorId = crypto.randomUUID();
  log.error({ err: error, errorId }, 'request failed');
  return { statusCode, code: 'InternalError', message: `internal error (id ${errorId})`, errorId };
}

/** The reply to anything but POST on a reconcile path. */
export function methodNotAllowed(method: string, path: string, requestKind = 'ReconcileRequest'): CoreReply {
  return errorReply(405, 'MethodNotAllowed', `${method} ${path} is not allowed; POST a ${requestKind}`);
}

export function tooLargeMessage(limitBytes: number): string {
  return `request body is larger than the limit of ${limitBytes} bytes (set KUBELOOP_BODY_LIMIT_BYTES or --body-limit-bytes to raise it)`;
}
