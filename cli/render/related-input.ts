// `kubeloop render --related`: the related objects of the request, from files, sorted into the Loop's
// spec.related entries exactly as the router sorts its caches (relation evaluation shared with it), and
// the objects a function `requires`, picked from the same files, so render can do the router's rounds.
import type { KubeObject, RequiredResource } from '../../lib/contract/types.ts';
import { matchesLabelSelector } from '../../lib/kube/label-selector.ts';
import { NAMESPACE_INDEX } from '../../lib/kube/object-store.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { type StoreView, parseRelated, RelatedSpecError, relatedObjectsOf } from '../../router/index.ts';
import { InputError } from './read-objects.ts';

/** A read-only cache over objects from files, shaped like the router's informer stores. */
function storeOf(objects: readonly KubeObject[]): StoreView {
  const byKey = new Map(objects.map((o) => [objectKey(o.metadata), o]));
  return {
    get: (key) => byKey.get(key),
    list: () => [...byKey.values()],
    byIndex: (index, value) => (index === NAMESPACE_INDEX ? [...byKey.values()].filter((o) => o.metadata?.namespace === value) : []),
    get size() {
      return byKey.size;
    },
  };
}

const sameKind = (o: KubeObject, apiVersion: string, kind: string) => o.apiVersion === apiVersion && o.kind === kind;

/**
 * request.related from `related` (objects from --related files): with the Loop's spec.related, one key per
 * entry holding what that entry selects for `primary`; `named` (--related name=FILE) adds keys as given.
 * Cluster-scoped kinds are told apart by the objects having no namespace (render has no discovery).
 */
export function renderRelated(primary: KubeObject, loopRelated: unknown, related: readonly KubeObject[], named: Record<string, KubeObject[]>): Record<string, KubeObject[]> | undefined {
  let relations;
  try {
    relations = parseRelated(loopRelated);
  } catch (error) {
    if (error instanceof RelatedSpecError) throw new InputError(`--loop: ${error.message}`);
    throw error;
  }
  if (relations.length === 0 && Object.keys(named).length === 0) {
    if (related.length > 0) throw new InputError('--related FILE needs --loop with spec.related (or use --related <name>=FILE)');
    return undefined;
  }
  const stores = relations.map((relation) => {
    const objects = related.filter((o) => sameKind(o, relation.kind.apiVersion, relation.kind.kind));
    // Without discovery: a kind is namespaced when its objects carry namespaces (or none are given).
    const namespaced = objects.length === 0 || objects.some((o) => o.metadata?.namespace);
    return { relation, store: storeOf(objects), namespaced };
  });
  return { ...relatedObjectsOf(primary, stores), ...named };
}

/** The objects in `available` that a `requires` entry asks for (the router reads them from the API). */
export function pickRequired(primary: KubeObject, entries: readonly RequiredResource[], available: readonly KubeObject[]): Record<string, KubeObject[]> {
  const picked: Record<string, KubeObject[]> = {};
  for (const entry of entries) {
    const namespace = entry.namespace ?? primary.metadata?.namespace;
    picked[entry.name] = available.filter(
      (o) =>
        sameKind(o, entry.apiVersion, entry.kind) &&
        (o.metadata?.namespace === undefined || o.metadata.namespace === namespace) &&
        (entry.names ? entry.names.includes(o.metadata?.name ?? '') : matchesLabelSelector(entry.selector ?? {}, o.metadata?.labels)),
    );
  }
  return picked;
}
