// Builds the ReconcileRequest for one primary from the informer caches: the primary and its children
// (by controller ownerReference, in the primary's namespace), one key per owned kind even when empty, and the
// related objects.
import { randomUUID } from 'node:crypto';
import type { KubeObject, ReconcileRequest, Trigger } from '../../lib/contract/types.ts';
import { CONTRACT_API_VERSION } from '../../lib/contract/types.ts';
import { childrenKey } from '../../lib/contract/children-key.ts';
import { CONTROLLER_UID_INDEX } from '../../lib/kube/object-store.ts';
import type { StoreView } from '../base/informer-view.ts';
import type { KindRef } from '../../api/meta.ts';

export interface OwnedStore {
  kind: KindRef;
  store: StoreView;
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
    reconcileId: randomUUID(),
    trigger: params.trigger,
    object: params.primary,
    children: childrenOf(params.primary, params.owned),
    ...(params.related ? { related: params.related } : {}),
    ...(params.finalizing ? { finalizing: true } : {}),
    now: (params.now ?? new Date()).toISOString(),
  };
}

/** Keeps the most informative trigger when queue entries coalesce: real events beat resyncs. */
export function mergeTriggers(waiting: Trigger, incoming: Trigger): Trigger {
  const rank = (t: Trigger) => (t.type === 'RESYNC' ? 0 : t.type === 'REQUEUE' ? 1 : 2);
  return rank(incoming) >= rank(waiting) ? incoming : waiting;
}
