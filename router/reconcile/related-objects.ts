// The related objects of one primary, read from the shared caches for request.related: one key per
// spec.related entry (even when nothing matches), sorted so recorded requests do not depend on cache order.
import type { KubeObject } from '../../lib/contract/types.ts';
import { matchesLabelSelector } from '../../lib/kube/label-selector.ts';
import { NAMESPACE_INDEX } from '../../lib/kube/object-store.ts';
import type { StoreView } from '../base/informer-view.ts';
import { relatedTarget, relatedView, type RelatedTarget, type RelationConfig } from '../base/related-relation.ts';

export interface RelatedStore {
  relation: RelationConfig;
  store: StoreView;
  /** Whether the related kind is namespaced (from discovery). */
  namespaced: boolean;
}

/** The cached objects a target covers. */
export function objectsOfTarget(store: StoreView, target: RelatedTarget | undefined): KubeObject[] {
  if (!target) return [];
  if (target.kind === 'names') return target.keys.map((key) => store.get(key)).filter((o): o is KubeObject => o !== undefined);
  const candidates = target.namespace === undefined ? store.list() : store.byIndex(NAMESPACE_INDEX, target.namespace);
  return candidates.filter((o) => matchesLabelSelector(target.selector, o.metadata?.labels));
}

export function byNamespaceAndName(a: KubeObject, b: KubeObject): number {
  const ka = `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`;
  const kb = `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

export function relatedObjectsOf(primary: KubeObject, stores: readonly RelatedStore[]): Record<string, KubeObject[]> {
  const related: Record<string, KubeObject[]> = {};
  for (const { relation, store, namespaced } of stores) {
    related[relation.name] = objectsOfTarget(store, relatedTarget(relation, primary, namespaced))
      .map((o) => relatedView(relation, o))
      .sort(byNamespaceAndName);
  }
  return related;
}
