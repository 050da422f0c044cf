// Replies every transport of the function runtime sends alike, outside the core's reconcile path.
import type { ErrorReply } from '../server/create-server.ts';

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

/** The reply to anything but POST on a reconcile path. */
export function methodNotAllowed(method: string, path: string, requestKind = 'ReconcileRequest'): CoreReply {
  return errorReply(405, 'MethodNotAllowed', `${method} ${path} is not allowed; POST a ${requestKind}`);
}

export function tooLargeMessage(limitBytes: number): string {
  return `request body is larger than the limit of ${limitBytes} bytes (set KUBELOOP_BODY_LIMIT_BYTES or --body-limit-bytes to raise it)`;
}
