// What the admission history API answers, as Kubernetes clients expect it: discovery documents for the group
// admissions.kubeloop.dev, a HookHistory per AdmissionHook or ClusterAdmissionHook, and a metav1 Status for
// every refusal (kubectl and the console print its message).
import { discoveryDocuments, failureStatus, type Status } from '../../lib/server/aggregated-api-documents.ts';
import type { AdmissionRecord } from '../gateway/admission-history.ts';

export const ADMISSIONS_GROUP = 'admissions.kubeloop.dev';
export const ADMISSIONS_VERSION = 'v1alpha1';
export const ADMISSIONS_API_VERSION = `${ADMISSIONS_GROUP}/${ADMISSIONS_VERSION}`;
export const HOOK_HISTORY_RESOURCE = 'hookhistories';
export const HOOK_HISTORY_KIND = 'HookHistory';

export interface HookHistory {
  apiVersion: typeof ADMISSIONS_API_VERSION;
  kind: typeof HOOK_HISTORY_KIND;
  metadata: { name: string; namespace?: string };
  /** The hook: an AdmissionHook (namespaced) or a ClusterAdmissionHook. */
  hook: { kind: 'AdmissionHook' | 'ClusterAdmissionHook'; namespace?: string; name: string };
  /** The gateway replica that answered: with several, each keeps the admissions it decided. */
  servedBy: string;
  /** Oldest first: the admissions of objects the caller may get. */
  entries: readonly AdmissionRecord[];
  /** Admissions kept but not shown: of objects the caller may not get, with why. */
  withheld?: { count: number; why: string[] };
}

export type AdmissionsStatus = Status;

export const admissionsFailure = (code: number, reason: string, message: string, name?: string): Status => failureStatus(ADMISSIONS_GROUP, HOOK_HISTORY_RESOURCE, code, reason, message, name);

// Namespaced as AdmissionHooks are; a ClusterAdmissionHook's history is read at hookhistories/<name>.
export const admissionsDiscovery = discoveryDocuments(ADMISSIONS_GROUP, ADMISSIONS_VERSION, { name: HOOK_HISTORY_RESOURCE, singularName: 'hookhistory', kind: HOOK_HISTORY_KIND });

/** What the console asks the API server for: an AdmissionHook's (namespace given) or a ClusterAdmissionHook's history. */
export function hookHistoryPath(namespace: string | undefined, name: string): string {
  const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `/apis/${ADMISSIONS_API_VERSION}${scope}/${HOOK_HISTORY_RESOURCE}/${encodeURIComponent(name)}`;
}
