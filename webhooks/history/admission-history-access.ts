// Who may see which admissions of a hook: a hook's history is told only to who may `get` the hook, and each
// admission in it only to who may `get` that kind of object in its namespace (checked namespace-wide, without
// names: a ClusterAdmissionHook sees every namespace's requests, its reader may not). Pure.
import { ADMISSION_HOOK_API_VERSION, ADMISSION_HOOK_PLURAL, CLUSTER_ADMISSION_HOOK_PLURAL } from '../../api/admission-hook.ts';
import type { ResourceAttributes } from '../../lib/kube/access-review.ts';
import type { AdmissionRecord } from '../gateway/admission-history.ts';

const HOOK_GROUP = ADMISSION_HOOK_API_VERSION.split('/')[0] ?? '';

/** The SubjectAccessReview attributes of `get` on the hook (namespace given: an AdmissionHook). */
export function hookAttributes(namespace: string | undefined, name: string): ResourceAttributes {
  return namespace ? { verb: 'get', group: HOOK_GROUP, resource: ADMISSION_HOOK_PLURAL, namespace, name } : { verb: 'get', group: HOOK_GROUP, resource: CLUSTER_ADMISSION_HOOK_PLURAL, name };
}

/** `get` on the entry's resource in its namespace (cluster-wide for a cluster-scoped object). */
export function entryAttributes(entry: AdmissionRecord): ResourceAttributes {
  const { group, resource } = entry.resource;
  return { verb: 'get', group, resource, ...(entry.namespace ? { namespace: entry.namespace } : {}) };
}

export const scopeKey = (a: ResourceAttributes) => `${a.group ?? ''}/${a.resource ?? ''} ${a.namespace ?? ''}`;

/** "configmaps in namespace team-b", "nodes cluster-wide". */
export const describeScope = (a: ResourceAttributes) => `${a.resource ?? ''}${a.group ? `.${a.group}` : ''} ${a.namespace ? `in namespace ${a.namespace}` : 'cluster-wide'}`;

/** The distinct scopes the entries' objects are in, each asked once. */
export function entryScopes(entries: readonly AdmissionRecord[]): ResourceAttributes[] {
  const scopes = new Map<string, ResourceAttributes>();
  for (const entry of entries) {
    const attributes = entryAttributes(entry);
    scopes.set(scopeKey(attributes), attributes);
  }
  return [...scopes.values()];
}

/** The entries the caller may see, and how many others there are and why they are not shown. */
export function visibleEntries(entries: readonly AdmissionRecord[], allowed: ReadonlySet<string>): { shown: AdmissionRecord[]; withheld?: { count: number; why: string[] } } {
  const shown: AdmissionRecord[] = [];
  const why = new Set<string>();
  let count = 0;
  for (const entry of entries) {
    const attributes = entryAttributes(entry);
    if (allowed.has(scopeKey(attributes))) shown.push(entry);
    else {
      count += 1;
      why.add(`of ${describeScope(attributes)}, which you may not get`);
    }
  }
  return count === 0 ? { shown } : { shown, withheld: { count, why: [...why] } };
}
