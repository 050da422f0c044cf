// Pure conversions at the gateway: an API server AdmissionReview request into the kubeloop.dev/v1
// AdmissionRequest a function receives, the function's AdmissionResponse back into an AdmissionReview
// response (checked: a mutating patch must apply to the object, a validating hook may not patch), and a
// failed call into the answer its failurePolicy asks for, with a message a kubectl user can act on.
import fastJsonPatch from 'fast-json-patch';
import type { AdmissionRequest, AdmissionResponse } from '../../lib/contract/admission-types.ts';
import { validateAdmissionResponse } from '../../lib/contract/validate.ts';
import type { KubeObject } from '../../api/meta.ts';
import type { AdmissionRequest as ReviewRequest, AdmissionResponse as ReviewResponse } from './admission-review.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';

/**
 * Why a function gave no usable answer; bounded, for the metric label and the condition reason. Refused: the
 * request could not be checked at all (nested deeper or larger than the runtime takes, or the function
 * answered 400, 413 or 422 to it). Throttled: not called, the hook's tenant had its cap of calls in flight.
 * CircuitOpen: not called, the hook's last calls failed in a row (hook-breaker.ts).
 */
export type CallFailureKind = 'Unreachable' | 'Timeout' | 'ErrorStatus' | 'InvalidResponse' | 'Refused' | 'Throttled' | 'CircuitOpen' | 'ContextPending' | 'ContextTooLarge';

export interface CallFailure {
  kind: CallFailureKind;
  message: string;
}

export function toFunctionRequest(review: ReviewRequest, hook: ResolvedHook, context: Record<string, KubeObject | null>, now: Date): AdmissionRequest {
  const request: AdmissionRequest = {
    apiVersion: 'kubeloop.dev/v1',
    kind: 'AdmissionRequest',
    hook: hook.name,
    ...(hook.namespace ? { hookNamespace: hook.namespace } : {}),
    uid: review.uid,
    operation: review.operation,
    requestKind: review.requestKind ?? review.kind,
    resource: review.resource,
    userInfo: review.userInfo ?? {},
    dryRun: review.dryRun === true,
    context,
    now: now.toISOString(),
  };
  if (review.subResource) request.subResource = review.subResource;
  if (review.name) request.name = review.name;
  if (review.namespace) request.namespace = review.namespace;
  if (isObject(review.object)) request.object = review.object as KubeObject;
  if (isObject(review.oldObject)) request.oldObject = review.oldObject as KubeObject;
  if (isObject(review.options)) request.options = review.options as Record<string, unknown>;
  return request;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type Conversion = { ok: true; response: ReviewResponse } | { ok: false; failure: CallFailure };

const invalid = (message: string): Conversion => ({ ok: false, failure: { kind: 'InvalidResponse', message } });

/** Checks a function's parsed reply and turns it into the AdmissionReview response for `uid`. */
export function toReviewResponse(reply: unknown, hook: ResolvedHook, request: AdmissionRequest): Conversion {
  const checked = validateAdmissionResponse(reply);
  if (!checked.ok) return invalid(`the reply is not an AdmissionResponse: ${checked.errors.slice(0, 3).join('; ')}`);
  const answer: AdmissionResponse = checked.value;
  const response: ReviewResponse = { uid: request.uid, allowed: answer.allowed };
  if (!answer.allowed) {
    const status = answer.status ?? { message: 'denied' };
    response.status = { code: status.code ?? 403, reason: status.reason ?? 'Forbidden', message: status.message };
  }
  if (answer.warnings?.length) response.warnings = answer.warnings;
  if (answer.auditAnnotations) response.auditAnnotations = answer.auditAnnotations;
  const patch = answer.patch ?? [];
  if (patch.length > 0 && answer.allowed) {
    if (hook.spec.type !== 'mutating') return invalid('a validating hook answered a patch; only mutating hooks may change the object');
    if (!request.object) return invalid(`a patch was answered for a ${request.operation}, which has no object to change`);
    // The API server would reject a patch that does not apply with a 500 the user cannot trace to us.
    const error = fastJsonPatch.validate(patch, structuredClone(request.object));
    if (error) return invalid(`the patch does not apply to the object: ${error.message.split('\n')[0]} (operation ${error.index ?? '?'})`);
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
  }
  return { ok: true, response };
}

const FAILURE_STATUS: Record<CallFailureKind, { code: number; reason: string }> = {
  Unreachable: { code: 503, reason: 'ServiceUnavailable' },
  Timeout: { code: 504, reason: 'Timeout' },
  ErrorStatus: { code: 500, reason: 'InternalError' },
  InvalidResponse: { code: 500, reason: 'InternalError' },
  Refused: { code: 400, reason: 'BadRequest' },
  Throttled: { code: 429, reason: 'TooManyRequests' },
  CircuitOpen: { code: 503, reason: 'ServiceUnavailable' },
  ContextPending: { code: 503, reason: 'ServiceUnavailable' },
  ContextTooLarge: { code: 413, reason: 'RequestEntityTooLarge' },
};

/** HTTP statuses by which a function says it cannot take this request (the runtime: too deep, too large, malformed). */
export const REFUSAL_STATUSES: ReadonlySet<number> = new Set([400, 413, 422]);

/** The message a client sees when the function failed; names the hook, the function and what to check. */
export function failureMessage(hook: ResolvedHook, failure: CallFailure): string {
  return `admission hook "${hook.id}": function ${hook.functionUrl} ${failure.message}`;
}

/**
 * Ignore: allowed unchanged, with a warning saying the hook was skipped. Fail: rejected, saying why. A request
 * a validating hook's function refused is rejected whatever the policy: otherwise nesting an object one level
 * deeper than the runtime takes (or making it larger) would be a way past every validating hook.
 */
export function applyFailurePolicy(uid: string, hook: ResolvedHook, failure: CallFailure): ReviewResponse {
  const message = failureMessage(hook, failure);
  if (failure.kind === 'Refused' && hook.spec.type === 'validating') {
    return { uid, allowed: false, status: { ...FAILURE_STATUS.Refused, message: `${message}; a validating hook does not admit what its function could not check` } };
  }
  if (hook.spec.failurePolicy === 'Ignore') return { uid, allowed: true, warnings: [`${message}; admitted without this hook (failurePolicy Ignore)`] };
  return { uid, allowed: false, status: { ...FAILURE_STATUS[failure.kind], message: `${message} (failurePolicy Fail)` } };
}
