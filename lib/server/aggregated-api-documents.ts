// The documents every aggregated API answers with, as Kubernetes clients expect them: discovery (APIGroupList,
// APIGroup, APIResourceList) and a metav1 Status for every refusal or error (kubectl prints its message).

export interface Status {
  apiVersion: 'v1';
  kind: 'Status';
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
  details?: { name?: string; group?: string; kind?: string };
}

/** A refusal of the API `group`'s resource `kind` (its plural), naming the object when there is one. */
export function failureStatus(group: string, kind: string, code: number, reason: string, message: string, name?: string): Status {
  return { apiVersion: 'v1', kind: 'Status', status: 'Failure', message, reason, code, details: { ...(name ? { name } : {}), group, kind } };
}

/** Discovery of a group with one version and one namespaced, get-only resource (read at <resource>/<name> when cluster-scoped). */
export function discoveryDocuments(group: string, version: string, resource: { name: string; singularName: string; kind: string }) {
  const groupVersion = `${group}/${version}`;
  const apiGroup = () => ({ kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [{ groupVersion, version }], preferredVersion: { groupVersion, version } });
  return {
    groupList: () => ({ kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup()] }),
    group: apiGroup,
    resourceList: () => ({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: [{ ...resource, namespaced: true, verbs: ['get'] }] }),
  };
}
