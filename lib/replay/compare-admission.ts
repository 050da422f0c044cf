// Two admission answers compared as a client would notice them: the decision, the denial's code, reason and
// message, the warnings, and a patch by the object it produces (so equal effects compare equal). One
// comparison for `kubeloop diff --hook` and the gateway's shadow hooks.
import type { AdmissionRequest, AdmissionResponse } from '../contract/admission-types.ts';
import type { KubeObject } from '../contract/types.ts';
import { diffJson, type Difference } from './json-diff.ts';
import { applyToCopy } from './patch-effect.ts';

/** What a client sees of an answer: the patch as the object it produces. */
function visible(request: AdmissionRequest, response: AdmissionResponse): Record<string, unknown> {
  const patch = response.patch ?? [];
  let patched: unknown;
  if (patch.length > 0) {
    const applied = request.object ? applyToCopy(request.object as KubeObject, patch) : undefined;
    patched = applied?.ok ? applied.object : { unappliedPatch: patch, error: applied ? applied.error : 'no object to patch' };
  }
  return {
    allowed: response.allowed,
    ...(response.allowed ? {} : { status: { code: response.status?.code ?? 403, reason: response.status?.reason ?? 'Forbidden', message: response.status?.message ?? '' } }),
    ...(patched === undefined ? {} : { patched }),
    warnings: response.warnings ?? [],
  };
}

/** Differences between the expected answer and the actual one ("expected A, got B"); [] when none. */
export function compareAdmissionResponses(request: AdmissionRequest, expected: AdmissionResponse, actual: AdmissionResponse): Difference[] {
  return diffJson(visible(request, expected), visible(request, actual));
}
