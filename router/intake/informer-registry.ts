// One informer per resource type and mode (full or metadata-only), shared by every Loop that needs it
// and stopped when the last Loop lets go.
import type { Logger } from 'pino';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer, stripManagedFields } from '../../lib/kube/informer.ts';
import type { InformerShard } from '../../lib/kube/shard-selector.ts';
import { watchTimeoutsOf, type WatchTimeouts } from '../../lib/kube/watch-watchdog.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { CONTROLLER_UID_INDEX, controllerUidOf, NAMESPACE_INDEX, namespaceOf } from '../../lib/kube/object-store.ts';
import { kindKey, type ResourceInfo } from '../../lib/kube/resource-paths.ts';
import type { KindRef } from '../../api/meta.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../../lib/contract/json-depth.ts';
import type { EventRecorder } from '../apply/event-recorder.ts';
import type { RouterMetrics } from '../base/router-metrics.ts';
import { combineInformers, type InformerView } from '../base/informer-view.ts';
import { tenantOfNamespace } from '../../api/tenant.ts';
import { tenantLabels } from '../base/tenant-metrics.ts';
import { cachedJsonSize } from '../../lib/contract/json-size.ts';
import { NamespaceFanout } from '../base/namespace-fanout.ts';
import { ClusterWideWatch, type GroupResource } from './cluster-wide-watch.ts';

export const UID_INDEX = 'uid';

/**
 * What an informer caches of each object: whole objects (false) or metadata only (true). A related entry's
 * `fields` is no mode: it is applied when the request is built, so every projection of a kind in a scope
 * shares one informer and one copy of each object.
 */
export type CacheMode = boolean;

export interface InformerLease {
  informer: InformerView;
  resource: ResourceInfo;
  release(): Promise<void>;
}

/** Where runners and the Loop controller get their informers: the registry, or test/support/memory-informers.ts in unit tests. */
export type InformerSource = Pick<InformerRegistry, 'acquire'> & Partial<Pick<InformerRegistry, 'onScopeChange' | 'resolve'>>;

/** A kind whose Loops must acquire it again: it moved between one cluster-wide watch and watches per namespace. */
export type ScopeChangeListener = (resource: ResourceInfo, state: 'cluster-wide' | 'per-namespace') => void;

interface Entry {
  informer: Informer<KubeObject>;
  resource: ResourceInfo;
  /** Whom the cache is charged to: the namespace it lists, or the cluster tenant for a cluster-wide watch. */
  tenant: string;
  users: number;
  /** A cluster-wide watch serving namespaced Loops (--cluster-wide-watch): their views; charged by object namespace. */
  fanout?: NamespaceFanout;
  /** Takes its cache's size out of kubeloop_router_watched_objects once stopped. */
  unreport: () => void;
}

/** The watches' timeouts and watchdog (WatchTimeouts) are handed on to every informer as they are. */
export interface InformerRegistryOptions extends WatchTimeouts {
  client: KubeClient;
  discovery: ResourceDiscovery;
  logger: Logger;
  metrics?: RouterMetrics;
  /** Where an object refused for its size is reported (a Warning event on it). */
  events?: Pick<EventRecorder, 'record'>;
  /** Objects holding more JSON values are never cached; DEFAULT_MAX_OBJECT_VALUES when omitted. */
  maxObjectValues?: number;
  /** Fill caches with one WatchList request where the API server serves it; true when omitted. */
  watchList?: boolean;
  /** Tenants with their own label in kubeloop_router_cached_bytes; the rest are `other`. */
  maxLabelledTenants?: number;
  /** Kinds served from one cluster-wide informer, filtered per namespace, where the router may watch them so. */
  clusterWideWatches?: readonly GroupResource[];
  /** How often such a kind served per namespace for lack of rights is asked about again (--access-review-seconds). */
  clusterWideRecheckMs?: number;
}

export class InformerRegistry {
  readonly #entries = new Map<string, Promise<Entry>>();
  /** Entries started (the map holds promises): what the cached-bytes metric sums. */
  readonly #started = new Set<Entry>();
  readonly #labels: ReturnType<typeof tenantLabels>;
  readonly #clusterWide: ClusterWideWatch;
  readonly #scopeListeners = new Set<ScopeChangeListener>();
  constructor(private readonly options: InformerRegistryOptions) {
    this.#labels = tenantLabels(options.maxLabelledTenants);
    options.metrics?.watchCaches(() => this.cachedBytesByTenant());
    this.#clusterWide = new ClusterWideWatch({
      kinds: options.clusterWideWatches ?? [],
      client: options.client,
      logger: options.logger,
      report: (resource, state) => {
        options.metrics?.clusterWideWatches.set({ resource, state }, 1);
        options.metrics?.clusterWideWatches.set({ resource, state: state === 'cluster-wide' ? 'per-namespace' : 'cluster-wide' }, 0);
      },
      changed: (resource, state) => {
        for (const listener of this.#scopeListeners) listener(resource, state);
      },
      ...(options.clusterWideRecheckMs ? { recheckMs: options.clusterWideRecheckMs } : {}),
    });
  }

  /** Tells `listener` when an opted-in kind moves between one cluster-wide watch and watches per namespace. */
  onScopeChange(listener: ScopeChangeListener): () => void {
    this.#scopeListeners.add(listener);
    return () => this.#scopeListeners.delete(listener);
  }

  /** Asks again whether kinds served per namespace for lack of rights may be watched cluster-wide (tests). */
  recheckClusterWide(): Promise<void> {
    return this.#clusterWide.recheck();
  }

  /** JSON bytes of every cached object, by tenant label (each object measured once, when first counted). */
  cachedBytesByTenant(): Map<string, number> {
    const sums = new Map<string, number>();
    const add = (tenant: string, bytes: number) => {
      const label = this.#labels.of(tenant);
      sums.set(label, (sums.get(label) ?? 0) + bytes);
    };
    for (const entry of this.#started) {
      let bytes = 0;
      for (const object of entry.informer.store.list()) {
        // A cluster-wide cache serving namespaced Loops is charged object by object to each one's namespace.
        if (entry.fanout) add(tenantOfNamespace(object.metadata?.namespace), cachedJsonSize(object));
        else bytes += cachedJsonSize(object);
      }
      if (!entry.fanout) add(entry.tenant, bytes);
    }
    return sums;
  }

  /** The kind's resource as discovery tells it (shared with `acquire`'s own lookup, asked once). */
  resolve(ref: KindRef): Promise<ResourceInfo> {
    return this.options.discovery.resolve(ref.apiVersion, ref.kind);
  }

  /**
   * The shared informers of a kind: one cluster-wide watch, or with `namespaces` one watch per namespace
   * (a Loop bound by namespaced RBAC may not watch cluster-wide). Started, not necessarily synced. With
   * `shard` (a sharded router's primaries) only that share is listed and watched, in informers of their own.
   * A kind opted in with --cluster-wide-watch, where the router may, is watched once for every namespace and
   * each Loop reads its namespaces through a filtered view (shares keep their own informers).
   */
  async acquire(ref: KindRef, mode: CacheMode, namespaces?: ReadonlySet<string>, shard?: InformerShard): Promise<InformerLease> {
    const resource = await this.options.discovery.resolve(ref.apiVersion, ref.kind);
    if (namespaces && namespaces.size > 0 && !shard && (await this.#clusterWide.covers(resource))) {
      const { entry, release } = await this.#acquireOne(resource, mode, undefined, undefined);
      if (!entry.fanout) {
        entry.fanout = new NamespaceFanout(entry.informer);
        // The router's ClusterRole lost the read: its Loops fall back to per-namespace watches (ClusterWideWatch.lost).
        entry.informer.on('restart', (_reason, error) => {
          if (error && isApiError(error, 403)) void this.#clusterWide.lost(resource, error);
        });
      }
      return { informer: entry.fanout.view(namespaces), resource, release };
    }
    const scopes = resource.namespaced && namespaces && namespaces.size > 0 ? [...namespaces].sort() : [undefined];
    const held: Array<{ namespace: string; entry: Entry; release: () => Promise<void> }> = [];
    try {
      for (const namespace of scopes) held.push({ namespace: namespace ?? '', ...(await this.#acquireOne(resource, mode, namespace, shard)) });
    } catch (error) {
      await Promise.all(held.map((h) => h.release()));
      throw error;
    }
    return {
      informer: combineInformers(new Map(held.map((h) => [h.namespace, h.entry.informer]))),
      resource,
      release: async () => {
        await Promise.all(held.map((h) => h.release()));
      },
    };
  }

  async #acquireOne(resource: ResourceInfo, mode: CacheMode, namespace: string | undefined, shard: InformerShard | undefined): Promise<{ entry: Entry; release: () => Promise<void> }> {
    const modeId = mode ? 'metadata' : 'full';
    // One router has one share: every sharded informer of a kind and mode is the same.
    const id = `${kindKey(resource.apiVersion, resource.kind)}|${modeId}|${namespace ?? '*'}${shard ? '|shard' : ''}`;
    let pending = this.#entries.get(id);
    if (!pending) {
      pending = this.#create(resource, mode, namespace, shard);
      this.#entries.set(id, pending);
      pending.catch(() => this.#entries.delete(id));
    }
    const entry = await pending;
    entry.users += 1;
    let released = false;
    return {
      entry,
      release: async () => {
        if (released) return;
        released = true;
        entry.users -= 1;
        if (entry.users === 0 && this.#entries.get(id) === pending) {
          this.#entries.delete(id);
          this.#started.delete(entry);
          this.options.metrics?.informers.dec({ resource: entry.informer.name });
          await entry.informer.stop();
          entry.unreport();
        }
      },
    };
  }

  async stopAll(): Promise<void> {
    this.#clusterWide.stop();
    const entries = await Promise.allSettled(this.#entries.values());
    this.#entries.clear();
    this.#started.clear();
    await Promise.all(entries.map((e) => (e.status === 'fulfilled' ? e.value.informer.stop() : undefined)));
  }

  async #create(resource: ResourceInfo, mode: CacheMode, namespace: string | undefined, shard: InformerShard | undefined): Promise<Entry> {
    const { client, logger, metrics, events } = this.options;
    const metadataOnly = mode;
    const maxValues = this.options.maxObjectValues ?? DEFAULT_MAX_OBJECT_VALUES;
    const informer = new Informer<KubeObject>({
      client,
      resource,
      namespace,
      metadataOnly,
      ...(shard ? { shard } : {}),
      // managedFields are large and no function reads them: dropping them is most of the memory saved.
      transform: stripManagedFields,
      // Checked before caching: an object of millions of tiny values would cost every Loop the router's heap.
      maxValues,
      onRefused: (object) => {
        metrics?.objectsRefused.inc({ resource: informer.name });
        events?.record(object, {
          type: 'Warning',
          reason: 'ObjectTooLarge',
          message: `kubeloop's router does not cache this object: it holds more than ${maxValues} JSON values (--max-object-values); no Loop sees it until it is smaller`,
        }, { tenant: tenantOfNamespace(object.metadata?.namespace), source: 'router' });
      },
      indexers: {
        [CONTROLLER_UID_INDEX]: controllerUidOf,
        [UID_INDEX]: (o) => (o.metadata?.uid ? [o.metadata.uid] : []),
        [NAMESPACE_INDEX]: namespaceOf,
      },
      ...watchTimeoutsOf(this.options),
      ...(this.options.watchList !== undefined ? { watchList: this.options.watchList } : {}),
      logger: logger.child({ informer: kindKey(resource.apiVersion, resource.kind), metadataOnly, namespace: namespace ?? '*' }),
    });
    informer.on('restart', (reason) => metrics?.watchRestarts.inc({ resource: informer.name, reason }));
    if (metrics) {
      const received = () => metrics.informerEvents.inc({ resource: informer.name });
      informer.on('add', received);
      informer.on('update', received);
      informer.on('delete', received);
      informer.on('bookmark', () => metrics.watchBookmarks.inc());
    }
    // Informers of one kind (one per namespace for namespaced Loops) share the resource label: each adds its own
    // size to the gauge as it changes, and takes it out when it stops, so the series is their sum.
    let reported = 0;
    const report = (size: number) => {
      metrics?.watchedObjects.inc({ resource: informer.name }, size - reported);
      reported = size;
    };
    if (metrics) {
      const update = () => report(informer.store.size);
      informer.on('add', update);
      informer.on('delete', update);
      informer.on('synced', update);
    }
    informer.start();
    metrics?.informers.inc({ resource: informer.name });
    const entry: Entry = { informer, resource, tenant: tenantOfNamespace(namespace), users: 0, unreport: () => report(0) };
    this.#started.add(entry);
    return entry;
  }
}
