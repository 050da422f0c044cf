// One informer per resource type and mode (full or metadata-only), shared by every Loop that needs it
// and stopped when the last Loop lets go.
import type { Logger } from 'pino';
import type { KubeObject } from '../lib/contract/types.ts';
import type { ResourceDiscovery } from '../lib/kube/discovery.ts';
import { Informer, stripManagedFields } from '../lib/kube/informer.ts';
import type { KubeClient } from '../lib/kube/kube-client.ts';
import { CONTROLLER_UID_INDEX, controllerUidOf } from '../lib/kube/object-store.ts';
import { kindKey, type ResourceInfo } from '../lib/kube/resource-paths.ts';
import type { KindRef } from './loop-spec.ts';
import type { RouterMetrics } from './router-metrics.ts';

export const UID_INDEX = 'uid';

export interface InformerLease {
  informer: Informer<KubeObject>;
  resource: ResourceInfo;
  release(): Promise<void>;
}

interface Entry {
  informer: Informer<KubeObject>;
  resource: ResourceInfo;
  users: number;
}

export interface InformerRegistryOptions {
  client: KubeClient;
  discovery: ResourceDiscovery;
  logger: Logger;
  metrics?: RouterMetrics;
  watchTimeoutSeconds?: number;
  watchdogGraceMs?: number;
}

export class InformerRegistry {
  readonly #entries = new Map<string, Promise<Entry>>();
  constructor(private readonly options: InformerRegistryOptions) {}

  /** The shared informer of a kind; started (not necessarily synced) when this resolves. */
  async acquire(ref: KindRef, metadataOnly: boolean): Promise<InformerLease> {
    const id = `${kindKey(ref.apiVersion, ref.kind)}|${metadataOnly ? 'metadata' : 'full'}`;
    let pending = this.#entries.get(id);
    if (!pending) {
      pending = this.#create(ref, metadataOnly);
      this.#entries.set(id, pending);
      pending.catch(() => this.#entries.delete(id));
    }
    const entry = await pending;
    entry.users += 1;
    let released = false;
    return {
      informer: entry.informer,
      resource: entry.resource,
      release: async () => {
        if (released) return;
        released = true;
        entry.users -= 1;
        if (entry.users === 0 && this.#entries.get(id) === pending) {
          this.#entries.delete(id);
          await entry.informer.stop();
          this.options.metrics?.watchedObjects.remove({ resource: entry.informer.name });
        }
      },
    };
  }

  /** Every informer currently running (for readiness and metrics). */
  async informers(): Promise<Informer<KubeObject>[]> {
    const entries = await Promise.allSettled(this.#entries.values());
    return entries.flatMap((e) => (e.status === 'fulfilled' ? [e.value.informer] : []));
  }

  async stopAll(): Promise<void> {
    const entries = await Promise.allSettled(this.#entries.values());
    this.#entries.clear();
    await Promise.all(entries.map((e) => (e.status === 'fulfilled' ? e.value.informer.stop() : undefined)));
  }

  async #create(ref: KindRef, metadataOnly: boolean): Promise<Entry> {
    const { client, discovery, logger, metrics } = this.options;
    const resource = await discovery.resolve(ref.apiVersion, ref.kind);
    const informer = new Informer<KubeObject>({
      client,
      resource,
      metadataOnly,
      // managedFields are large and no function reads them: dropping them is most of the memory saved.
      transform: stripManagedFields,
      indexers: { [CONTROLLER_UID_INDEX]: controllerUidOf, [UID_INDEX]: (o) => (o.metadata?.uid ? [o.metadata.uid] : []) },
      watchTimeoutSeconds: this.options.watchTimeoutSeconds,
      watchdogGraceMs: this.options.watchdogGraceMs,
      logger: logger.child({ informer: kindKey(ref.apiVersion, ref.kind), metadataOnly }),
    });
    informer.on('restart', (reason) => metrics?.watchRestarts.inc({ resource: informer.name, reason }));
    if (metrics) {
      const update = () => metrics.watchedObjects.set({ resource: informer.name }, informer.store.size);
      informer.on('add', update);
      informer.on('delete', update);
      informer.on('synced', update);
    }
    informer.start();
    return { informer, resource, users: 0 };
  }
}
