// In-memory informers behind the InformerSource interface, for the unit tests of LoopRunner, LoopController
// and the webhook's HookController (its HookInformerSource): a test puts, changes and deletes objects and says when a list is complete, as a watch
// would; nothing talks to an API server (what needs one is tested in test/e2e).
import type { KubeObject } from '../../lib/contract/types.ts';
import { UnknownKindError } from '../../lib/kube/discovery.ts';
import type { InformerHandlers, RestartReason } from '../../lib/kube/informer.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { CONTROLLER_UID_INDEX, controllerUidOf, ObjectStore } from '../../lib/kube/object-store.ts';
import { kindKey, type ResourceInfo } from '../../lib/kube/resource-paths.ts';
import type { KindRef } from '../../api/meta.ts';
import type { InformerView } from '../../router/base/informer-view.ts';
import { UID_INDEX, type InformerLease, type InformerSource, type ScopeChangeListener } from '../../router/intake/informer-registry.ts';

/** Kinds the runner and controller tests use. */
export const TEST_RESOURCES = {
  podsets: { group: 'app.kubeloop.dev', version: 'v1alpha1', apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', plural: 'podsets', namespaced: true },
  pods: { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
  services: { group: '', version: 'v1', apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true },
  loops: { group: 'kubeloop.dev', version: 'v1alpha1', apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterLoop', plural: 'clusterloops', namespaced: false },
} satisfies Record<string, ResourceInfo>;

/** The four kinds the RBAC watch follows (lib/kube/rbac-watch.ts). */
export const RBAC_RESOURCES: ResourceInfo[] = ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].map((kind) => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  plural: `${kind.toLowerCase()}s`,
  namespaced: !kind.startsWith('Cluster'),
}));

type Handlers = { [E in keyof InformerHandlers<KubeObject>]: Set<InformerHandlers<KubeObject>[E]> };

export class MemoryInformer implements InformerView {
  readonly store = new ObjectStore<KubeObject>({ [CONTROLLER_UID_INDEX]: controllerUidOf, [UID_INDEX]: (o) => (o.metadata?.uid ? [o.metadata.uid] : []) });
  readonly #handlers: Handlers = { add: new Set(), update: new Set(), delete: new Set(), synced: new Set(), restart: new Set(), watching: new Set(), gathered: new Set(), bookmark: new Set() };
  #synced = false;
  #markSynced!: () => void;
  readonly #syncedPromise = new Promise<void>((resolve) => (this.#markSynced = resolve));

  constructor(readonly name: string) {}

  get hasSynced(): boolean {
    return this.#synced;
  }

  on<E extends keyof InformerHandlers<KubeObject>>(event: E, handler: InformerHandlers<KubeObject>[E]): () => void {
    const set = this.#handlers[event] as Set<InformerHandlers<KubeObject>[E]>;
    set.add(handler);
    return () => set.delete(handler);
  }

  waitForSync(): Promise<void> {
    return this.#syncedPromise;
  }

  /** As an Informer's: the test, not a watch, feeds it. */
  start(): this {
    return this;
  }

  async stop(): Promise<void> {}

  /** The first complete list arrived. */
  sync(): void {
    this.#synced = true;
    this.#markSynced();
    for (const handler of this.#handlers.synced) handler();
  }

  /** An object of the first list as it is decoded, before the sync (the store holds it only once put). */
  gather(object: KubeObject): void {
    for (const handler of this.#handlers.gathered) handler(object);
  }

  /** An object added or changed, as a watch event. */
  put(object: KubeObject): void {
    const previous = this.store.upsert(object);
    if (previous) for (const handler of this.#handlers.update) handler(object, previous);
    else for (const handler of this.#handlers.add) handler(object);
  }

  remove(object: KubeObject): void {
    const previous = this.store.delete(objectKey(object.metadata));
    if (previous) for (const handler of this.#handlers.delete) handler(previous);
  }

  restart(reason: RestartReason, error?: Error): void {
    for (const handler of this.#handlers.restart) handler(reason, error);
  }
}

/** One informer per declared kind, shared by every acquire, as the registry shares them; other kinds are unknown. */
export class MemoryInformers implements InformerSource {
  readonly #informers = new Map<string, { informer: MemoryInformer; resource: ResourceInfo }>();
  /** Leases handed out and not yet released. */
  held = 0;
  readonly #scopeListeners = new Set<ScopeChangeListener>();

  constructor(resources: readonly ResourceInfo[]) {
    for (const resource of resources) this.serve(resource);
  }

  /** The API server serves a kind from now on (a CRD installed). */
  serve(resource: ResourceInfo): void {
    this.#informers.set(kindKey(resource.apiVersion, resource.kind), { informer: new MemoryInformer(resource.plural), resource });
  }

  of(apiVersion: string, kind: string): MemoryInformer {
    const entry = this.#informers.get(kindKey(apiVersion, kind));
    if (!entry) throw new Error(`no in-memory informer for ${kind} ${apiVersion}`);
    return entry.informer;
  }

  onScopeChange(listener: ScopeChangeListener): () => void {
    this.#scopeListeners.add(listener);
    return () => this.#scopeListeners.delete(listener);
  }

  /** As the registry when an opted-in kind moves between one cluster-wide watch and per-namespace watches. */
  changeScope(apiVersion: string, kind: string, state: 'cluster-wide' | 'per-namespace'): void {
    const entry = this.#informers.get(kindKey(apiVersion, kind));
    if (!entry) throw new Error(`no in-memory informer for ${kind} ${apiVersion}`);
    for (const listener of this.#scopeListeners) listener(entry.resource, state);
  }

  async acquire(ref: KindRef): Promise<InformerLease> {
    const entry = this.#informers.get(kindKey(ref.apiVersion, ref.kind));
    if (!entry) throw new UnknownKindError(ref.apiVersion, ref.kind, 'not served');
    this.held += 1;
    let released = false;
    return {
      informer: entry.informer,
      resource: entry.resource,
      release: async () => {
        if (!released) this.held -= 1;
        released = true;
      },
    };
  }
}
