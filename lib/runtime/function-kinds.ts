// What differs between a reconcile function and an admission function behind the shared core: the
// request it validates, the call, the reply it checks, and its paths. Everything else is one code path.
import type { AdmissionResponse } from '../contract/admission-types.ts';
import { CONTRACT_API_VERSION, type ReconcileResponse } from '../contract/types.ts';
import { validateAdmissionRequest, validateAdmissionResponse, validateReconcileRequest, validateReconcileResponse } from '../contract/validate.ts';
import { isAdmissionDefinition, type AdmissionDefinition } from '../sdk/define-admission.ts';
import type { FunctionDefinition } from '../sdk/define-function.ts';
import { objectKey } from '../kube/object-meta.ts';
import { ADMIT_PATHS, RECONCILE_PATHS } from './http-replies.ts';

/** Any function the runtime serves. */
export type AnyFunctionDefinition = FunctionDefinition | AdmissionDefinition;

/** A request or reply the contract refuses; the core turns it into 400 InvalidRequest or 500 InvalidResponse. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export interface AcceptedRequest {
  request: unknown;
  /** Correlation id: the reconcileId or the admission uid. */
  id?: string;
  /** Log fields: loop/hook and object key. */
  context: Record<string, unknown>;
}

export interface FunctionKind {
  /** "ReconcileRequest" or "AdmissionRequest", for messages. */
  requestKind: string;
  paths: readonly string[];
  /** Admission is a synchronous webhook hop: CloudEvents bring nothing there, so JSON only. */
  cloudEvents: boolean;
  accept(value: unknown): Checked<AcceptedRequest>;
  call(request: unknown): unknown;
  /** Checks the reply; `summary` is logged at debug. */
  check(response: unknown): Checked<{ response: unknown; summary: Record<string, unknown> }>;
}

export const apiVersionProblem = (value: unknown): string | undefined => {
  const apiVersion = typeof value === 'object' && value !== null ? (value as { apiVersion?: unknown }).apiVersion : undefined;
  return apiVersion !== undefined && apiVersion !== CONTRACT_API_VERSION
    ? `apiVersion ${JSON.stringify(apiVersion)} is not supported; this function speaks ${CONTRACT_API_VERSION}`
    : undefined;
};

function reconcileKind(definition: FunctionDefinition): FunctionKind {
  return {
    requestKind: 'ReconcileRequest',
    paths: RECONCILE_PATHS,
    cloudEvents: true,
    accept(value) {
      const checked = validateReconcileRequest(value);
      if (!checked.ok) return { ok: false, message: `invalid ReconcileRequest: ${checked.errors.join('; ')}` };
      const request = checked.value;
      return { ok: true, value: { request, ...(request.reconcileId ? { id: request.reconcileId } : {}), context: { loop: request.loop, key: objectKey(request.object.metadata) } } };
    },
    call: (request) => definition.reconcile(request as Parameters<FunctionDefinition['reconcile']>[0]),
    check(response) {
      const checked = validateReconcileResponse(response);
      if (!checked.ok) return { ok: false, message: `invalid ReconcileResponse: ${checked.errors.join('; ')}` };
      return { ok: true, value: { response: checked.value, summary: { actions: (checked.value as ReconcileResponse).actions.length } } };
    },
  };
}

function admissionKind(definition: AdmissionDefinition): FunctionKind {
  return {
    requestKind: 'AdmissionRequest',
    paths: ADMIT_PATHS,
    cloudEvents: false,
    accept(value) {
      const checked = validateAdmissionRequest(value);
      if (!checked.ok) return { ok: false, message: `invalid AdmissionRequest: ${checked.errors.join('; ')}` };
      const request = checked.value;
      const object = request.object ?? request.oldObject;
      const key = request.namespace ? `${request.namespace}/${request.name || object?.metadata?.generateName || ''}` : (request.name ?? '');
      return { ok: true, value: { request, id: request.uid, context: { hook: request.hook, key, operation: request.operation } } };
    },
    call: (request) => definition.admit(request as Parameters<AdmissionDefinition['admit']>[0]),
    check(response) {
      const checked = validateAdmissionResponse(response);
      if (!checked.ok) return { ok: false, message: `invalid AdmissionResponse: ${checked.errors.join('; ')}` };
      const reply: AdmissionResponse = checked.value;
      // Caught here, in the function's own logs and tests, rather than as a gateway rejection later.
      if (definition.type === 'validating' && reply.patch?.length) {
        return { ok: false, message: 'invalid AdmissionResponse: a validating function may not return a patch' };
      }
      return { ok: true, value: { response: reply, summary: { allowed: reply.allowed, patchOperations: reply.patch?.length ?? 0 } } };
    },
  };
}

export function functionKindOf(definition: AnyFunctionDefinition): FunctionKind {
  return isAdmissionDefinition(definition) ? admissionKind(definition) : reconcileKind(definition);
}
