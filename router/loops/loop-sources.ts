// Where the Loop controller's loops come from: the watched ClusterLoops and namespaced Loops (their informers'
// keys are the loops' identities, `<name>` and `<namespace>/<name>`), or the inline Loops given at start.
// loop-controller.ts asks it for a loop by identity, every identity, and the namespaced Loops it selects.
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { matchesLabelSelector } from '../../lib/kube/label-selector.ts';
import { UnknownKindError } from '../../lib/kube/discovery.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { isApiError } from '../../lib/kube/kube-client.ts';
import type { InformerLease, InformerSource } from '../intake/informer-registry.ts';
import { CLUSTER_LOOP_KIND, LOOP_API_VERSION, LOOP_KIND, loopIdentity, type Loop } from '../../api/loop.ts';
import { enqueueLoopEvents } from './loop-events.ts';

/** The router may not list or watch namespaced Loops. */
class LoopsForbiddenError extends Error {}

export interface LoopSourcesOptions {
  registry: InformerSource;
  logger: Logger;
  inline?: Loop[];
  loopSelector?: V1LabelSelector;
}

export class LoopSources {
  readonly #o: LoopSourcesOptions;
  /** The ClusterLoops (cluster-scoped) and the namespaced Loops of every namespace. */
  #clusterLoops: InformerLease | undefined;
  #namespacedLoops: InformerLease | undefined;
  #inline = new Map<string, Loop>();

  constructor(options: LoopSourcesOptions) {
    this.#o = options;
  }

  /** Starts watching (or reads the inline Loops); `enqueue` gets each identity, `affected` the ids a namespace's change may move. */
  async start(enqueue: (id: string) => void, affected: (namespace: string | undefined) => string[]): Promise<void> {
    if (this.#o.inline) {
      for (const loop of this.#o.inline) {
        const id = loopIdentity(loop.kind === LOOP_KIND ? loop.metadata.namespace : undefined, loop.metadata.name ?? '');
        this.#inline.set(id, loop);
        enqueue(id);
      }
      return;
    }
    // Both kinds at once: the namespaced Loops' list does not wait for the ClusterLoops' round trips.
    const namespaced = this.#watch(LOOP_KIND, enqueue, affected).catch((error: Error) => this.#unserved(error));
    await Promise.all([this.#watch(CLUSTER_LOOP_KIND, enqueue, affected), namespaced]);
  }

  /**
   * A cluster with only the ClusterLoop CRD (an older chart's CRDs), or a router whose RBAC predates the
   * namespaced kind: ClusterLoops run, Loops are not served (the list would be retried forever otherwise).
   */
  async #unserved(error: Error): Promise<void> {
    const forbidden = error instanceof LoopsForbiddenError;
    if (!(error instanceof UnknownKindError) && !forbidden) throw error;
    await this.#namespacedLoops?.release();
    this.#namespacedLoops = undefined;
    const why = forbidden ? 'the router may not list loops.kubeloop.dev (its RBAC)' : 'the loops.kubeloop.dev CRD is not installed';
    this.#o.logger.warn({ err: error.message }, `namespaced Loops are not served: ${why}`);
  }

  /**
   * Watches one kind of loop. The lease is kept before the informer syncs: the loops it lists at start are
   * enqueued during the sync, and the queue reads them from its store (kept only after the sync, a loop that
   * existed before the router started was taken for deleted and never ran until it changed).
   */
  async #watch(kind: typeof LOOP_KIND | typeof CLUSTER_LOOP_KIND, enqueue: (id: string) => void, affected: (namespace: string | undefined) => string[]): Promise<void> {
    const lease = await this.#o.registry.acquire({ apiVersion: LOOP_API_VERSION, kind }, false);
    if (kind === LOOP_KIND) this.#namespacedLoops = lease;
    else this.#clusterLoops = lease;
    const informer = lease.informer;
    enqueueLoopEvents(informer, enqueue, (namespace) => (kind === LOOP_KIND ? affected(namespace) : []));
    if (kind === CLUSTER_LOOP_KIND) return informer.waitForSync();
    // A 403 on the namespaced kind is not retried into a router that never starts: the caller drops it.
    const forbidden = new Promise<Error>((resolve) => informer.on('restart', (_reason, error) => error && isApiError(error, 403) && resolve(error)));
    const refused = await Promise.race([informer.waitForSync().then(() => undefined), forbidden]);
    if (refused) throw new LoopsForbiddenError(refused.message);
  }

  async release(): Promise<void> {
    await this.#clusterLoops?.release();
    await this.#namespacedLoops?.release();
  }

  /** Every loop's identity. */
  names(): string[] {
    if (this.#o.inline) return [...this.#inline.keys()];
    const loops = [...(this.#clusterLoops?.informer.store.list() ?? []), ...(this.#namespacedLoops?.informer.store.list() ?? [])];
    return loops.map((o) => objectKey(o.metadata)).filter((n) => n !== '');
  }

  /** The loop by identity, or undefined when it is gone or not selected. */
  loop(id: string): Loop | undefined {
    if (this.#o.inline) return this.#inline.get(id);
    // Namespace names hold no '/': an identity with one is a namespaced Loop's.
    const lease = id.includes('/') ? this.#namespacedLoops : this.#clusterLoops;
    const loop = lease?.informer.store.get(id) as unknown as Loop | undefined;
    // A Loop that stops matching the selector is treated as deleted by this router.
    return loop && matchesLabelSelector(this.#o.loopSelector, loop.metadata.labels) ? loop : undefined;
  }

  /** The selected namespaced Loops, for the per-tenant limit. */
  selectedNamespaced(): Loop[] {
    if (this.#o.inline) return [];
    const loops = (this.#namespacedLoops?.informer.store.list() ?? []) as unknown as Loop[];
    return loops.filter((l) => matchesLabelSelector(this.#o.loopSelector, l.metadata.labels));
  }
}
