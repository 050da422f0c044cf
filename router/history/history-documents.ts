// What the history API answers, as Kubernetes clients expect it: discovery documents for the group, an
// ObjectHistory per object, and a metav1 Status for every refusal or error (kubectl prints its message).
import { discoveryDocuments, failureStatus, type Status } from '../../lib/server/aggregated-api-documents.ts';
import type { ReconcileRecord } from '../reconcile/flight-recorder.ts';

export const HISTORY_GROUP = 'history.kubeloop.dev';
export const HISTORY_VERSION = 'v1alpha1';
export const HISTORY_API_VERSION = `${HISTORY_GROUP}/${HISTORY_VERSION}`;
export const HISTORY_RESOURCE = 'histories';
export const OBJECT_HISTORY_KIND = 'ObjectHistory';

export interface ObjectHistory {
  apiVersion: typeof HISTORY_API_VERSION;
  kind: typeof OBJECT_HISTORY_KIND;
  metadata: { name: string; namespace?: string };
  /** The Loop's identity as the router keys it (a name today; `<namespace>/<name>` for namespaced Loops). */
  loop: string;
  /** The Loop's primary: the object whose reconciles these are. */
  object: { apiVersion: string; kind: string; namespace?: string; name: string };
  /** The router replica that answered (with sharding, the member that reconciled the key). */
  servedBy: string;
  /** Oldest first; the latest entry with a request carries it (or why it is withheld: requestOmitted). */
  entries: ReadonlyArray<ReconcileRecord & { requestOmitted?: string }>;
}

export type { Status };

export const failure = (code: number, reason: string, message: string, name?: string): Status => failureStatus(HISTORY_GROUP, HISTORY_RESOURCE, code, reason, message, name);

// Namespaced as most primaries are; a cluster-scoped primary's history is read at histories/<name>.
const discovery = discoveryDocuments(HISTORY_GROUP, HISTORY_VERSION, { name: HISTORY_RESOURCE, singularName: 'history', kind: OBJECT_HISTORY_KIND });
export const apiGroup = discovery.group;
export const apiGroupList = discovery.groupList;
export const apiResourceList = discovery.resourceList;

/** What `kubeloop history` asks the API server for; the loop goes in the query (its identity may hold a '/'). */
export function historyRequest(loop: string, namespace: string | undefined, name: string): { path: string; query: { loop: string } } {
  const scope = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return { path: `/apis/${HISTORY_API_VERSION}${scope}/${HISTORY_RESOURCE}/${encodeURIComponent(name)}`, query: { loop } };
}
