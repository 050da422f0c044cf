// `kubeloop diff --hook`: recorded admission requests (API server AdmissionReviews, or kubeloop fixtures
// { description, request }) turned into what the gateway sends, and the pure comparison of two answers:
// the decision, the denial's code and message, the warnings, and a patch by its effect on the object.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { AdmissionRequest, AdmissionResponse } from '../../lib/contract/admission-types.ts';
import { validateAdmissionRequest } from '../../lib/contract/validate.ts';
import type { Difference } from '../../lib/replay/json-diff.ts';
import { compareAdmissionResponses } from '../../lib/replay/compare-admission.ts';
import { jsonFilesIn } from '../../lib/replay/fixtures.ts';
import { type AdmissionReview, toFunctionRequest, type ResolvedHook } from '../../webhooks/index.ts';
import { asVersions } from './object-diff.ts';

export type RecordedAdmission = { file: string; ok: true; request: AdmissionRequest } | { file: string; ok: false; error: string };

/** One file: an AdmissionReview as the API server sends it, a fixture { request, ... }, or a bare AdmissionRequest. */
export function parseRecordedAdmission(file: string, text: string, hook: Pick<ResolvedHook, 'name'>, now: Date): RecordedAdmission {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { file, ok: false, error: `not valid JSON: ${(error as Error).message}` };
  }
  const record = (value ?? {}) as { kind?: unknown; request?: unknown };
  let request: unknown;
  if (record.kind === 'AdmissionReview') {
    const review = record as AdmissionReview;
    if (!review.request) return { file, ok: false, error: 'an AdmissionReview without a request' };
    // An API server review carries no context objects: the gateway looks them up at admission time.
    request = toFunctionRequest(review.request, hook as ResolvedHook, {}, now);
  } else {
    request = record.kind === 'AdmissionRequest' ? record : record.request;
  }
  const checked = validateAdmissionRequest(request);
  if (!checked.ok) return { file, ok: false, error: `not an AdmissionReview, nor an AdmissionRequest: ${checked.errors.slice(0, 3).join('; ')}` };
  return { file, ok: true, request: { ...checked.value, hook: hook.name } };
}

/** Every *.json directly in `dir` (sorted), or the one file given. */
export function readRecordedAdmissions(dir: string, hook: Pick<ResolvedHook, 'name'>, now: Date): RecordedAdmission[] {
  return jsonFilesIn(dir).map((file) => parseRecordedAdmission(file, readFileSync(file, 'utf8'), hook, now));
}

/** Differences a user would notice between the current version's answer and the new one's; [] when none. */
export function compareAdmission(request: AdmissionRequest, baseline: AdmissionResponse, candidate: AdmissionResponse): Difference[] {
  return compareAdmissionResponses(request, baseline, candidate).map(asVersions);
}

/** "allowed", "allowed, patched", "denied (403): message". */
export function decisionOf(response: AdmissionResponse): string {
  if (!response.allowed) return `denied (${response.status?.code ?? 403}): ${response.status?.message ?? ''}`;
  return (response.patch ?? []).length > 0 ? 'allowed, patched' : 'allowed';
}

/** What the request was about, for the report: "CREATE Pod shop/web-1" (a generateName prefix ends in *). */
export function admissionSubject(request: AdmissionRequest, file: string): string {
  const object = request.object ?? request.oldObject;
  const name = request.name || object?.metadata?.name || (object?.metadata?.generateName ? `${object.metadata.generateName}*` : basename(file, '.json'));
  return `${request.operation} ${request.requestKind.kind} ${request.namespace ? `${request.namespace}/` : ''}${name}`;
}
