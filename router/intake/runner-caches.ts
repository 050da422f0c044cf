// A running Loop's informer caches as a reconcile reads them (LoopCaches, reconcile-scope.ts): its primaries, owned
// and related kinds, and the lookups that authority checks and expectations make in them.
import type { KubeObject } from '../../lib/contract/types.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { kindKey, objectPath } from '../../lib/kube/resource-paths.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { LoopCaches } from '../reconcile/reconcile-scope.ts';
import type { InformerLease } from './informer-registry.ts';
import type { RelatedWatch } from './related-watch.ts';

/** `primaryOf`: a primary as the cache holds it, or as it was called before its list was complete (early-primaries.ts). */
export function runnerCaches(
  loop: LoopConfig,
  primary: InformerLease,
  owned: ReadonlyArray<InformerLease & { kind: LoopConfig['owns'][number] }>,
  related: RelatedWatch | undefined,
  primaryOf: (key: string) => KubeObject | undefined,
): LoopCaches {
  const store = primary.informer.store;
  return {
    primaries: { get: primaryOf, list: () => store.list(), byIndex: (index, value) => store.byIndex(index, value), get size() { return store.size; } },
    owned: owned.map((o) => ({ kind: o.kind, store: o.informer.store })),
    related: related?.stores() ?? [],
    // A cached object of the primary or an owned kind (authority checks, expectations).
    lookup: (apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined => {
      const key = namespace ? `${namespace}/${name}` : name;
      if (apiVersion === loop.for.apiVersion && kind === loop.for.kind) return primaryOf(key);
      return owned.find((o) => o.kind.apiVersion === apiVersion && o.kind.kind === kind)?.informer.store.get(key);
    },
    // Whether a child (by kindKey and object key) is in the cache, for Expectations.
    lookupChild: (kind: string, key: string): { uid?: string } | undefined => {
      const object = owned.find((o) => kindKey(o.kind.apiVersion, o.kind.kind) === kind)?.informer.store.get(key);
      return object ? { uid: object.metadata?.uid } : undefined;
    },
  };
}

/**
 * The uid of a primary (what its shard slot follows): from the cache, else from the API server (a sharded member
 * caches only its share). Undefined when the object does not exist.
 */
export async function primaryUidOf(primary: InformerLease | undefined, client: KubeClient, key: string): Promise<string | undefined> {
  const cached = primary?.informer.store.get(key)?.metadata?.uid;
  if (cached || !primary) return cached;
  const [namespace, name] = key.includes('/') ? (key.split('/', 2) as [string, string]) : [undefined, key];
  try {
    const object = await client.request<KubeObject>({ path: objectPath(primary.resource, name, namespace) });
    return object.metadata?.uid;
  } catch (error) {
    if (isApiError(error, 404)) return undefined;
    throw error;
  }
}
