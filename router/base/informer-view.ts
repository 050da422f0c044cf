// One read-only view over the informers of several namespaces, so a Loop limited to namespaces (and bound
// by namespaced RBAC) watches only those, while its runner reads them as one cache.
import type { KubeObject } from '../../lib/contract/types.ts';
import type { Informer, InformerHandlers } from '../../lib/kube/informer.ts';

export interface StoreView {
  get(key: string): KubeObject | undefined;
  list(): KubeObject[];
  byIndex(index: string, value: string): KubeObject[];
  readonly size: number;
}

export interface InformerView {
  readonly name: string;
  readonly store: StoreView;
  readonly hasSynced: boolean;
  on<E extends keyof InformerHandlers<KubeObject>>(event: E, handler: InformerHandlers<KubeObject>[E]): () => void;
  waitForSync(): Promise<void>;
}

/** A view over per-namespace informers; a single informer is returned as it is. */
export function combineInformers(byNamespace: Map<string, Informer<KubeObject>>): InformerView {
  const informers = [...byNamespace.values()];
  if (informers.length === 1) return informers[0]!;
  const store: StoreView = {
    get(key) {
      const slash = key.indexOf('/');
      return slash < 0 ? undefined : byNamespace.get(key.slice(0, slash))?.store.get(key);
    },
    list: () => informers.flatMap((i) => i.store.list()),
    byIndex: (index, value) => informers.flatMap((i) => i.store.byIndex(index, value)),
    get size() {
      return informers.reduce((n, i) => n + i.store.size, 0);
    },
  };
  return {
    name: `${informers[0]?.name ?? ''} in ${[...byNamespace.keys()].join(',')}`,
    store,
    get hasSynced() {
      return informers.every((i) => i.hasSynced);
    },
    on(event, handler) {
      const offs = informers.map((i) => i.on(event, handler));
      return () => offs.forEach((off) => off());
    },
    waitForSync: async () => {
      await Promise.all(informers.map((i) => i.waitForSync()));
    },
  };
}
