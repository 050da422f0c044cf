// A running Loop's informer caches as a reconcile reads them (LoopCaches, reconcile-scope.ts): its primaries, owned
// and related kinds, and the lookups that authority checks and expectations make in them.
import type { KubeObject } from '../../lib/contract/types.ts';
import { kindKey } from '../../lib/kube/resource-paths.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { LoopCaches } from '../reconcile/reconcile-scope.ts';
import type { InformerLease } from './informer-registry.ts';
import type { RelatedWatch } from './related-watch.ts';

export function runnerCaches(loop: LoopConfig, primary: InformerLease, owned: ReadonlyArray<InformerLease & { kind: LoopConfig['owns'][number] }>, related: RelatedWatch | undefined): LoopCaches {
  return {
    primaries: primary.informer.store,
    owned: owned.map((o) => ({ kind: o.kind, store: o.informer.store })),
    related: related?.stores() ?? [],
    // A cached object of the primary or an owned kind (authority checks, expectations).
    lookup: (apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined => {
      const key = namespace ? `${namespace}/${name}` : name;
      if (apiVersion === loop.for.apiVersion && kind === loop.for.kind) return primary.informer.store.get(key);
      return owned.find((o) => o.kind.apiVersion === apiVersion && o.kind.kind === kind)?.informer.store.get(key);
    },
    // Whether a child (by kindKey and object key) is in the cache, for Expectations.
    lookupChild: (kind: string, key: string): { uid?: string } | undefined => {
      const object = owned.find((o) => kindKey(o.kind.apiVersion, o.kind.kind) === kind)?.informer.store.get(key);
      return object ? { uid: object.metadata?.uid } : undefined;
    },
  };
}
