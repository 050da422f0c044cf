// Builds the ReconcileRequest for one primary: the primary and its children (by controller ownerReference, in
// the primary's namespace), one key per owned kind even when empty, and the related objects. Shared by the
// router (from its informer caches) and `kubeloop diff` (from one list per kind), so both send the same request.
import { randomUUID } from 'node:crypto';
import type { KubeObject, ReconcileRequest, Trigger } from '../contract/types.ts';
import { CONTRACT_API_VERSION } from '../contract/types.ts';
import { childrenKey } from '../contract/children-key.ts';
import { CONTROLLER_UID_INDEX } from '../kube/object-store.ts';
import type { KindRef } from '../../api/meta.ts';

/** The objects of one owned kind, indexed by their controller's uid (CONTROLLER_UID_INDEX). */
export interface OwnedStore {
  kind: KindRef;
  store: { byIndex(index: string, value: string): KubeObject[] };
}

export function childrenOf(primary: KubeObject, owned: readonly OwnedStore[]): Record<string, KubeObject[]> {
  const uid = primary.metadata?.uid;
  const namespace = primary.metadata?.namespace;
  const children: Record<string, KubeObject[]> = {};
  for (const { kind, store } of owned) {
    // A namespaced owner cannot own objects elsewhere (the garbage collector ignores such references): an
    // object in another namespace naming the primary's uid is someone's forgery, not a child.
    const list = (uid ? store.byIndex(CONTROLLER_UID_INDEX, uid) : []).filter((child) => namespace === undefined || child.metadata?.namespace === namespace);
    // Stable order (by name) so recorded requests and function output do not depend on cache order.
    children[childrenKey(kind.apiVersion, kind.kind)] = list.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  }
  return children;
}

export function buildRequest(params: {
  loop: string;
  /** A namespaced Loop's namespace (request.loopNamespace); undefined for a ClusterLoop. */
  loopNamespace?: string | undefined;
  primary: KubeObject;
  owned: readonly OwnedStore[];
  trigger: Trigger;
  finalizing: boolean;
  /** request.related: declared entries and required ones; omitted for Loops with neither. */
  related?: Record<string, KubeObject[]>;
  now?: Date;
}): ReconcileRequest {
  return {
    apiVersion: CONTRACT_API_VERSION,
    kind: 'ReconcileRequest',
    loop: params.loop,
    ...(params.loopNamespace ? { loopNamespace: params.loopNamespace } : {}),
    reconcileId: randomUUID(),
    trigger: params.trigger,
    object: params.primary,
    children: childrenOf(params.primary, params.owned),
    ...(params.related ? { related: params.related } : {}),
    ...(params.finalizing ? { finalizing: true } : {}),
    now: (params.now ?? new Date()).toISOString(),
  };
}
