// Standard Webhooks signing around the function core: with a key, a request must carry a valid, fresh
// signature (else 401 InvalidSignature) and every reply is signed with the request's webhook-id.
// Without a key the core is returned as is, so unsigned deployments pay nothing.
import { parseSigningSecret, signatureHeaders, verify, type SigningKey } from '../signing/webhook-signature.ts';
import type { CoreReply, FunctionCore, RequestHeaders } from './function-core.ts';

export interface SigningOptions {
  /** The `whsec_…` secret; undefined = requests are not checked and replies not signed. */
  signingSecret?: string;
  /** The clock; tests pin it. */
  nowMs?: () => number;
}

const ID_PATTERN = /^[^.\s]{1,256}$/;

function requestId(headers: RequestHeaders): string | undefined {
  const id = headers['webhook-id'];
  return typeof id === 'string' && ID_PATTERN.test(id) ? id : undefined;
}

export function withSigning(core: FunctionCore, options: SigningOptions): FunctionCore {
  if (options.signingSecret === undefined) return core;
  const key: SigningKey = parseSigningSecret(options.signingSecret);
  const now = options.nowMs ?? Date.now;
  const signed = (reply: CoreReply, headers: RequestHeaders): CoreReply => ({
    ...reply,
    headers: { ...reply.headers, ...signatureHeaders(key, reply.body, { id: requestId(headers), nowMs: now() }) },
  });
  return {
    ...core,
    handle(request) {
      const check = verify(key, request.headers, request.body, { nowMs: now() });
      if (!check.ok) return signed(core.reject(401, 'InvalidSignature', check.message, request.headers), request.headers);
      return signed(core.handle(request), request.headers);
    },
    reject(status, code, message, headers) {
      return signed(core.reject(status, code, message, headers), headers);
    },
  };
}
