// Per-namespace views over one cluster-wide informer (--cluster-wide-watch): a namespaced Loop reads and hears
// only its namespaces' objects, while the router lists and watches the kind once instead of once per namespace.
import type { KubeObject } from '../../lib/contract/types.ts';
import type { InformerHandlers } from '../../lib/kube/informer.ts';
import { NAMESPACE_INDEX } from '../../lib/kube/object-store.ts';
import type { InformerView, StoreView } from './informer-view.ts';

type ObjectEvent = 'add' | 'update' | 'delete' | 'gathered';
type ObjectHandler = (object: KubeObject, previous?: KubeObject) => void;

/** The namespace of a store key ("namespace/name"); undefined for a cluster-scoped key. */
function namespaceOfKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  return slash < 0 ? undefined : key.slice(0, slash);
}

/**
 * Routes a cluster-wide informer's object events to the views of the object's namespace: one handler per event
 * on the informer whatever the number of views, so an event costs one map look-up, not one call per tenant, and
 * an event of a namespace no view covers reaches no handler at all.
 */
export class NamespaceFanout {
  readonly #handlers: Record<ObjectEvent, Map<string, Set<ObjectHandler>>> = { add: new Map(), update: new Map(), delete: new Map(), gathered: new Map() };

  /** `source` must index its store by NAMESPACE_INDEX (the registry's informers do). */
  constructor(private readonly source: InformerView) {
    for (const event of ['add', 'update', 'delete', 'gathered'] as const) {
      const handler: ObjectHandler = (object, previous) => {
        const set = this.#handlers[event].get(object.metadata?.namespace ?? '');
        if (set) for (const h of [...set]) h(object, previous);
      };
      source.on(event, handler as InformerHandlers<KubeObject>[typeof event]);
    }
  }

  /** Namespaces some view still listens to, for tests and metrics. */
  get listenedNamespaces(): number {
    const namespaces = new Set<string>();
    for (const byNamespace of Object.values(this.#handlers)) for (const ns of byNamespace.keys()) namespaces.add(ns);
    return namespaces.size;
  }

  /** A read-only view of `namespaces` (a namespaced kind's objects; never empty). */
  view(namespaces: ReadonlySet<string>): InformerView {
    const source = this.source;
    const covers = (object: KubeObject | undefined): object is KubeObject => object !== undefined && namespaces.has(object.metadata?.namespace ?? '');
    const listed = () => [...namespaces].flatMap((ns) => source.store.byIndex(NAMESPACE_INDEX, ns));
    const store: StoreView = {
      get: (key) => {
        const ns = namespaceOfKey(key);
        return ns !== undefined && namespaces.has(ns) ? source.store.get(key) : undefined;
      },
      list: listed,
      byIndex: (index, value) => (index === NAMESPACE_INDEX ? (namespaces.has(value) ? source.store.byIndex(index, value) : []) : source.store.byIndex(index, value).filter(covers)),
      get size() {
        return [...namespaces].reduce((n, ns) => n + source.store.byIndex(NAMESPACE_INDEX, ns).length, 0);
      },
    };
    return {
      name: `${source.name} in ${[...namespaces].sort().join(',')} (cluster-wide watch)`,
      store,
      get hasSynced() {
        return source.hasSynced;
      },
      on: (event, handler) => {
        if (event === 'synced' || event === 'restart' || event === 'watching' || event === 'bookmark') return source.on(event, handler);
        return this.#listen(event, namespaces, handler as ObjectHandler);
      },
      waitForSync: () => source.waitForSync(),
    };
  }

  #listen(event: ObjectEvent, namespaces: ReadonlySet<string>, handler: ObjectHandler): () => void {
    const byNamespace = this.#handlers[event];
    for (const ns of namespaces) {
      let set = byNamespace.get(ns);
      if (!set) byNamespace.set(ns, (set = new Set()));
      set.add(handler);
    }
    return () => {
      for (const ns of namespaces) {
        const set = byNamespace.get(ns);
        set?.delete(handler);
        if (set?.size === 0) byNamespace.delete(ns);
      }
    };
  }
}
