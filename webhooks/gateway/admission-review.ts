// The admission.k8s.io/v1 AdmissionReview wire shape: validating what the API server sent (malformed
// requests become a 400 with a message) and building the response, with a base64 JSON patch.
import type { AdmissionOperation, GroupVersionKind, GroupVersionResource } from '../../lib/contract/admission-types.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export type { AdmissionOperation, GroupVersionKind, GroupVersionResource };

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo?: { username?: string; uid?: string; groups?: string[] };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string };
  patchType?: 'JSONPatch';
  /** base64 of the JSON patch document. */
  patch?: string;
  warnings?: string[];
  /** Recorded in the audit event, keys prefixed by the API server with the webhook name. */
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export class MalformedReviewError extends Error {
  readonly statusCode = 400;
  readonly code = 'MalformedAdmissionReview';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/** Checks the envelope the webhook relies on; anything else in the request is passed through untouched. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  if (!isRecord(body)) throw new MalformedReviewError('request body must be a JSON object (an AdmissionReview)');
  if (body.kind !== 'AdmissionReview') {
    throw new MalformedReviewError(`expected kind "AdmissionReview", got ${JSON.stringify(body.kind ?? null)}`);
  }
  if (body.apiVersion !== ADMISSION_API_VERSION) {
    throw new MalformedReviewError(
      `unsupported AdmissionReview apiVersion ${JSON.stringify(body.apiVersion ?? null)}; this webhook speaks ${ADMISSION_API_VERSION} (set admissionReviewVersions: ["v1"])`,
    );
  }
  const request = body.request;
  if (!isRecord(request)) throw new MalformedReviewError('AdmissionReview has no "request" object');
  if (typeof request.uid !== 'string' || request.uid === '') throw new MalformedReviewError('request.uid must be a non-empty string');
  if (typeof request.operation !== 'string' || !OPERATIONS.has(request.operation)) {
    throw new MalformedReviewError(`request.operation must be one of ${[...OPERATIONS].join(', ')}`);
  }
  if (!isRecord(request.kind) || typeof request.kind.kind !== 'string') throw new MalformedReviewError('request.kind must be a GroupVersionKind');
  if (!isRecord(request.resource) || typeof request.resource.resource !== 'string') {
    throw new MalformedReviewError('request.resource must be a GroupVersionResource');
  }
  // oldObject is what a DELETE (and an UPDATE) carries, and what the gateway reads when there is no object.
  checkObjectMetadata(request.object, 'request.object');
  checkObjectMetadata(request.oldObject, 'request.oldObject');
  return request as unknown as AdmissionRequest;
}

/** The webhook reads names and annotations as strings; the API server guarantees it, a caller might not. */
function checkObjectMetadata(object: unknown, where: string): void {
  if (object === undefined || object === null) return;
  if (!isRecord(object)) throw new MalformedReviewError(`${where} must be an object`);
  const metadata = object.metadata;
  if (metadata === undefined) return;
  if (!isRecord(metadata)) throw new MalformedReviewError(`${where}.metadata must be an object`);
  for (const field of ['name', 'generateName', 'namespace'] as const) {
    if (metadata[field] !== undefined && typeof metadata[field] !== 'string') throw new MalformedReviewError(`${where}.metadata.${field} must be a string`);
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = metadata[field];
    if (map === undefined) continue;
    if (!isRecord(map)) throw new MalformedReviewError(`${where}.metadata.${field} must be an object of strings`);
    for (const [key, value] of Object.entries(map)) {
      if (typeof value !== 'string') throw new MalformedReviewError(`${where}.metadata.${field}[${JSON.stringify(key)}] must be a string`);
    }
  }
}

export function reviewResponse(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}
