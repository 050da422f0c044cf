// Who may see the request an entry kept: it holds the primary and also its children and related objects,
// which a user who may get the primary may not be allowed to read. The request is shown only to a user who
// may get every kind it holds in every namespace it holds them in (checked namespace-wide, without names).
import type { KubeObject, ReconcileRequest } from '../../lib/contract/types.ts';
import type { ReconcileRecord } from '../reconcile/flight-recorder.ts';

export interface RequestScope {
  apiVersion: string;
  kind: string;
  /** undefined: a cluster-scoped object. */
  namespace: string | undefined;
}

/** Pure: the distinct kinds and namespaces of the objects a request holds, the primary first. */
export function requestScopes(request: ReconcileRequest): RequestScope[] {
  const objects: KubeObject[] = [request.object, ...Object.values(request.children).flat(), ...Object.values(request.related ?? {}).flat()];
  const scopes = new Map<string, RequestScope>();
  for (const o of objects) {
    const scope = { apiVersion: o.apiVersion ?? '', kind: o.kind ?? '', namespace: o.metadata?.namespace || undefined };
    scopes.set(`${scope.apiVersion}|${scope.kind}|${scope.namespace ?? ''}`, scope);
  }
  return [...scopes.values()];
}

export type RequestVerdict = { shown: true } | { shown: false; why: string };

/** The entries as served: every request removed but the latest entry's, and that one only when `verdict` allows it. */
export function servedEntries(entries: readonly ReconcileRecord[], verdict: RequestVerdict | undefined): Array<ReconcileRecord & { requestOmitted?: string }> {
  return entries.map((entry) => {
    const { request, ...rest } = entry;
    if (!request) return rest;
    return verdict?.shown ? { ...rest, request } : { ...rest, requestOmitted: verdict?.why ?? 'not asked for' };
  });
}
