// Standard Webhooks signing around the function core with node:crypto: with a key, a request must carry a
// valid, fresh signature made with the request key of its audience (else 401 InvalidSignature, unsigned),
// and the reply is signed with the reply key for the request's webhook-id. Without a key the core is
// returned as is, so unsigned deployments pay nothing.
import { parseSigningSecrets, signReply, verifyRequest } from '../signing/webhook-signature.ts';
import type { FunctionCore } from './function-core.ts';
import { gateOnSignature, requestVerdict } from './signature-gate.ts';

export interface SigningOptions {
  /**
   * The `whsec_…` secret, or several space-separated ("whsec_new whsec_old") while a key is rotated:
   * requests signed with any are accepted and replies carry one signature per key.
   * Undefined = requests are not checked and replies not signed.
   */
  signingSecret?: string;
  /** The clock; tests pin it. */
  nowMs?: () => number;
}

export function withSigning(core: FunctionCore, options: SigningOptions): FunctionCore {
  if (options.signingSecret === undefined) return core;
  const keys = parseSigningSecrets(options.signingSecret);
  const now = options.nowMs ?? Date.now;
  return gateOnSignature(
    core,
    (request) => requestVerdict(verifyRequest(keys, request.headers, request.body, { nowMs: now() })),
    (reply, verified) => ({ ...reply, headers: { ...reply.headers, ...signReply(keys, verified.audience, verified.id, reply.body, { nowMs: now() }) } }),
  );
}
