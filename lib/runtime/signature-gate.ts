// The signed-call policy around the function core, whatever computes the HMACs (node:crypto in
// signed-core.ts, Web Crypto in fetch-handler.ts): a request without a valid, fresh signature is refused
// with 401 InvalidSignature before the function runs, and every reply (refusals too) goes through `sign`.
import type { VerifyResult } from '../signing/standard-webhooks.ts';
import type { CoreRequest, FunctionCore, RequestHeaders } from './function-core.ts';
import type { CoreReply } from './http-replies.ts';

export function gateOnSignature(
  core: FunctionCore,
  check: (request: CoreRequest) => VerifyResult,
  sign: (reply: CoreReply, requestHeaders: RequestHeaders) => CoreReply,
): FunctionCore {
  return {
    ...core,
    handle(request) {
      const verdict = check(request);
      if (!verdict.ok) return sign(core.reject(401, 'InvalidSignature', verdict.message, request.headers), request.headers);
      return sign(core.handle(request), request.headers);
    },
    reject(status, code, message, headers) {
      return sign(core.reject(status, code, message, headers), headers);
    },
  };
}
