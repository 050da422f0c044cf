// Reply helpers for admission functions: allow, deny, and a mutation expressed as code on a copy of the
// object (the JSON patch is computed, never hand-written), as Pepr's Mutate does.
import fastJsonPatch from 'fast-json-patch';
import type { AdmissionRequest, AdmissionResponse, AdmissionStatus } from '../contract/admission-types.ts';
import type { JsonPatchOperation, KubeObject } from '../contract/types.ts';
import { cloneJson } from './clone-json.ts';

const { compare } = fastJsonPatch;

export interface ReplyExtras {
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

function withExtras(response: AdmissionResponse, extras: ReplyExtras): AdmissionResponse {
  if (extras.warnings?.length) response.warnings = extras.warnings;
  if (extras.auditAnnotations && Object.keys(extras.auditAnnotations).length > 0) response.auditAnnotations = extras.auditAnnotations;
  return response;
}

export function allow(extras: ReplyExtras = {}): AdmissionResponse {
  return withExtras({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true }, extras);
}

/** A denial; code 403 (Forbidden) unless given. The message is what `kubectl` prints. */
export function deny(message: string, options: Partial<Omit<AdmissionStatus, 'message'>> & ReplyExtras = {}): AdmissionResponse {
  const status: AdmissionStatus = { code: options.code ?? 403, reason: options.reason ?? 'Forbidden', message };
  return withExtras({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: false, status }, options);
}

/** Allows with the JSON patch of `patch` (allowed unchanged when it is empty). */
export function allowWithPatch(patch: JsonPatchOperation[], extras: ReplyExtras = {}): AdmissionResponse {
  const response = allow(extras);
  if (patch.length > 0) response.patch = patch;
  return response;
}

/**
 * Runs `change` on a copy of request.object and allows with the patch that turns the object into the
 * copy. An unchanged copy gives no patch, so a reinvoked hook that finds its work done is a no-op.
 */
export function mutate<T extends KubeObject = KubeObject>(request: AdmissionRequest, change: (draft: T) => void, extras: ReplyExtras = {}): AdmissionResponse {
  if (!request.object) throw new Error(`mutate: a ${request.operation} request has no object to change`);
  const draft = cloneJson(request.object) as T;
  change(draft);
  return allowWithPatch(compare(request.object, draft), extras);
}
