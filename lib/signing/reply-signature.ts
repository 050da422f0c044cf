// The caller's check of a signed reply (docs/contract.md, "Signed calls"): a valid, fresh signature made
// for this request's webhook-id. One function for the router's dispatch and `kubeloop replay`/`conformance`,
// so the tools judge a function's signing exactly as the router does.
import { verify, type SigningKeys } from './webhook-signature.ts';
import type { HeaderSource } from './standard-webhooks.ts';

export type ReplyVerdict = { ok: true } | { ok: false; message: string };

export function verifyReplySignature(
  keys: SigningKeys,
  requestId: string,
  headers: HeaderSource,
  body: string,
  options: { nowMs?: number } = {},
): ReplyVerdict {
  const check = verify(keys, headers, body, options);
  if (!check.ok) return { ok: false, message: `reply signature refused: ${check.message}` };
  if (check.id !== requestId) {
    const shown = check.id.length > 80 ? `${check.id.slice(0, 80)}…` : check.id;
    return { ok: false, message: `reply is signed for webhook-id ${shown}, not this request's ${requestId}` };
  }
  return { ok: true };
}
