// The related objects of one primary, read from the shared caches for request.related: one key per
// spec.related entry (even when nothing matches), sorted so recorded requests do not depend on cache order;
// counted and measured against the request caps before anything is projected or sent.
import type { KubeObject } from '../../lib/contract/types.ts';
import { cachedJsonSize, jsonByteSize } from '../../lib/contract/json-size.ts';
import { bytesProblem, entryCountProblem, type RelatedTally, type RequestCaps } from '../base/request-caps.ts';
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

const UNCAPPED: RequestCaps = { objectsPerEntry: Infinity, objectsPerRequest: Infinity, relatedBytesPerRequest: Infinity };

/** Every related entry's objects, uncapped (`kubeloop diff` and `render` read them from their own lists). */
export function relatedObjectsOf(primary: KubeObject, stores: readonly RelatedStore[]): Record<string, KubeObject[]> {
  const collected = collectRelated(primary, stores, UNCAPPED, { objects: 0, bytes: 0 });
  return collected.ok ? collected.related : {};
}

export type Collected = { ok: true; related: Record<string, KubeObject[]> } | { ok: false; message: string };

/**
 * The related objects of one request, added to `tally`; the first cap crossed stops it: an entry's count
 * before any of its objects is projected, the bytes object by object (cached sizes are measured once per
 * object; a projection as what it sends).
 */
export function collectRelated(primary: KubeObject, stores: readonly RelatedStore[], caps: RequestCaps, tally: RelatedTally): Collected {
  const related: Record<string, KubeObject[]> = {};
  for (const { relation, store, namespaced } of stores) {
    const objects = objectsOfTarget(store, relatedTarget(relation, primary, namespaced));
    const tallied = tallyEntry(relation.name, objects, tally, caps, (o) => relatedView(relation, o), (o, view) => (relation.fields ? jsonByteSize(view) : cachedJsonSize(o)));
    if (!tallied.ok) return tallied;
    related[relation.name] = tallied.views.sort(byNamespaceAndName);
  }
  return { ok: true, related };
}

/**
 * Counts one entry's objects and their bytes into `tally` against the caps (declared and required entries
 * alike); `view` is what is sent of an object, `size` its bytes.
 */
export function tallyEntry(
  entry: string,
  objects: readonly KubeObject[],
  tally: RelatedTally,
  caps: RequestCaps,
  view: (object: KubeObject) => KubeObject = (o) => o,
  size: (object: KubeObject, view: KubeObject) => number = (_o, v) => cachedJsonSize(v),
): { ok: true; views: KubeObject[] } | { ok: false; message: string } {
  const counted = entryCountProblem(entry, objects.length, tally, caps);
  if (counted) return { ok: false, message: counted };
  tally.objects += objects.length;
  const views: KubeObject[] = [];
  for (const object of objects) {
    const shown = view(object);
    const bytes = size(object, shown);
    const problem = bytesProblem(entry, bytes, tally, caps);
    if (problem) return { ok: false, message: problem };
    tally.bytes += bytes;
    views.push(shown);
  }
  return { ok: true, views };
}
