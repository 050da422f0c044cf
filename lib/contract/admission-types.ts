// The kubeloop.dev/v1 admission contract between the webhook gateway and admission functions
// (docs/admission.md): an AdmissionRequest in, an AdmissionResponse out; no I/O in the function.
import type { KubeObject } from '../../api/meta.ts';
import type { JsonPatchOperation } from './types.ts';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** authentication.k8s.io/v1 UserInfo of whoever made the API request. */
export interface AdmissionUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AdmissionRequest {
  apiVersion: 'kubeloop.dev/v1';
  kind: 'AdmissionRequest';
  /** Name of the AdmissionHook that sent the request. */
  hook: string;
  /** The namespace of a namespaced AdmissionHook; absent for a ClusterAdmissionHook (docs/tenants.md). */
  hookNamespace?: string;
  /** The API server's request uid; functions log it (and the gateway echoes it in the AdmissionReview). */
  uid: string;
  operation: AdmissionOperation;
  /** Kind of the object as sent (after matchPolicy Equivalent conversion). */
  requestKind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  /** Empty on a CREATE through generateName. */
  name?: string;
  namespace?: string;
  /** The object being admitted; absent for DELETE. */
  object?: KubeObject;
  /** The stored object for UPDATE and DELETE. */
  oldObject?: KubeObject;
  userInfo: AdmissionUserInfo;
  /** True for `kubectl --dry-run=server`: decide the same way, but have no side effects. */
  dryRun: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions as sent. */
  options?: Record<string, unknown>;
  /** The AdmissionHook's context objects by entry name; null when the named object does not exist. */
  context: Record<string, KubeObject | null>;
  /** The gateway's clock, RFC 3339; functions never read their own clock. */
  now: string;
}

export interface AdmissionStatus {
  /** HTTP status shown to the client; 403 when omitted. */
  code?: number;
  /** A CamelCase metav1.StatusReason such as Forbidden or Invalid. */
  reason?: string;
  /** What the client sees, e.g. in kubectl's "admission webhook ... denied the request: <message>". */
  message: string;
}

export interface AdmissionResponse {
  apiVersion: 'kubeloop.dev/v1';
  kind: 'AdmissionResponse';
  allowed: boolean;
  /** Required when allowed is false. */
  status?: AdmissionStatus;
  /** Mutating hooks only: RFC 6902 operations against request.object. */
  patch?: JsonPatchOperation[];
  /** Shown by kubectl as "Warning: ..."; at most 120 characters each is what clients display well. */
  warnings?: string[];
  /** Recorded in the audit log under "<hook>.kubeloop.dev/<key>". */
  auditAnnotations?: Record<string, string>;
}
