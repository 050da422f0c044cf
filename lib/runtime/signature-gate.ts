// The signed-call policy around the function core, whatever computes the HMACs (node:crypto in
// signed-core.ts, Web Crypto in fetch-handler.ts): a request without a valid, fresh signature is refused
// with 401 InvalidSignature before the function runs. Only replies to verified requests are signed: a
// refusal signed with the caller's webhook-id would let anyone get any id signed (a signing oracle).
import type { VerifyResult } from '../signing/standard-webhooks.ts';
import type { CoreRequest, FunctionCore } from './function-core.ts';
import type { CoreReply } from './http-replies.ts';

/** A request whose signature checked out: the id and audience its reply is signed for. */
export type VerifiedRequest = { ok: true; id: string; audience: string };
export type RequestVerdict = VerifiedRequest | Extract<VerifyResult, { ok: false }>;

export function gateOnSignature(core: FunctionCore, check: (request: CoreRequest) => RequestVerdict, sign: (reply: CoreReply, verified: VerifiedRequest) => CoreReply): FunctionCore {
  return {
    ...core,
    handle(request) {
      const verdict = check(request);
      if (!verdict.ok) return core.reject(401, 'InvalidSignature', verdict.message, request.headers);
      return sign(core.handle(request), verdict);
    },
    // Refusals by the transport (413, 415) come before the signature is checked: never signed.
    reject: (status, code, message, headers) => core.reject(status, code, message, headers),
  };
}

/** A verify result with its audience, as the gate wants it. */
export function requestVerdict(result: VerifyResult & { audience?: string }): RequestVerdict {
  if (!result.ok) return result;
  return result.audience === undefined ? { ok: false, message: 'no audience' } : { ok: true, id: result.id, audience: result.audience };
}
