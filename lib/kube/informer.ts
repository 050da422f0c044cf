// A resilient informer's list/watch loop (client-go's reflector; its cache is informer-cache.ts, one watch
// informer-watch.ts): a WatchList (watch-list.ts) or a list, then watch from its resourceVersion; relist on 410 Gone
// (backing off if 410s follow relists); restart with backoff on any other error (informer-restart.ts decides), end
// when its KubeClient is closed; metadata-only mode; a sharded list and watch of a share that may change.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Backoff, sleep, type BackoffPolicy } from './backoff.ts';
import type { KubeClient } from './kube-client.ts';
import type { IndexFunction, ObjectStore } from './object-store.ts';
import { InformerCache, type AdmittedState, type InformerHandlers, type RestartReason } from './informer-cache.ts';
import { InformerWatch, type WatchPosition } from './informer-watch.ts';
import { afterFailure, notSyncedError } from './informer-restart.ts';
import { kindKey, type ResourceInfo } from './resource-paths.ts';
import { initialRequest, rememberWatchListRefused, watchListRefusal, type InitialRequest } from './watch-list.ts';
import { ReshardError } from './watch-errors.ts';
import { listAll } from './list-all.ts';
import { serverApplied, type InformerShard, type ListedShard } from './shard-selector.ts';

export { DEFAULT_BOOKMARKED_WATCH_TIMEOUT_SECONDS, DEFAULT_WATCH_SILENCE_SECONDS, DEFAULT_WATCH_TIMEOUT_SECONDS } from './watch-watchdog.ts';

export interface InformerOptions<T extends KubernetesObject> {
  client: KubeClient;
  resource: ResourceInfo;
  /** Watch one namespace; all when omitted. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * List and watch only a share (`shardSelector`, KEP-5866). The informer waits for a selector, lists again
   * when it changes, and forgets (no delete event) objects that left the share. A server that ignores the
   * selector sends everything (serverApplied): the cache then holds the whole collection.
   */
  shard?: InformerShard;
  /** Cache PartialObjectMetadata (apiVersion, kind, metadata) instead of whole objects. */
  metadataOnly?: boolean;
  /**
   * Applied to every object before caching, e.g. to drop managedFields and save memory. It should only drop:
   * a watch event whose line is shorter than maxValues is not counted again after it.
   */
  transform?: (object: T) => T;
  /**
   * Objects holding more JSON values than this are never cached (a cached older version is dropped, without
   * a handler event): one object of tiny values must not cost the process its heap. onRefused reports them.
   */
  maxValues?: number;
  onRefused?: (object: T, values: number) => void;
  indexers?: Record<string, IndexFunction<T>>;
  /**
   * Fill the cache with one WatchList request (the state streamed as events, synced at the initial-events-end
   * bookmark) where the API server serves it; false: always a paged list, then a watch. Default true.
   */
  watchList?: boolean;
  /** Page size of the list. */
  pageSize?: number;
  /**
   * Server-side watch timeout until the server has sent a bookmark; each watch picks a value in [t, 2t) so informers
   * do not reconnect in step. A WatchList's deadline for its initial-events-end bookmark. 300 s by default.
   */
  watchTimeoutSeconds?: number;
  /** The same once it has (and for a WatchList), when silence is counted: fewer renewals at rest. 1,800 s by default. */
  bookmarkedWatchTimeoutSeconds?: number;
  /** Once the server has sent a bookmark, a watch that hears nothing this long is silent: ended, watched again. 180 s by default. */
  watchSilenceMs?: number;
  /** A watch still open this long after its server-side timeout is considered silent and is aborted. */
  watchdogGraceMs?: number;
  backoff?: BackoffPolicy;
  logger?: Logger;
}

export type { InformerHandlers, RestartReason };

const WATCH_BACKOFF: BackoffPolicy = { baseMs: 250, maxMs: 30_000, jitter: 0.2 };

export class Informer<T extends KubernetesObject = KubernetesObject> {
  readonly store: ObjectStore<T>;
  readonly #options: InformerOptions<T>;
  readonly #cache: InformerCache<T>;
  readonly #watch: InformerWatch<T>;
  /** Aborted by stop(), or by the loop itself when the KubeClient was closed (the reason is then its error). */
  readonly #abort = new AbortController();
  readonly #backoff: Backoff;
  /** 410s in a row, each right after the relist of the one before. */
  readonly #expiries: Backoff;
  readonly #position: WatchPosition = { resourceVersion: undefined, listed: undefined, bookmarked: false };
  #synced = false;
  #syncWaiters: Array<() => void> = [];
  #running: Promise<void> | undefined;
  #restarts = 0;
  #needList = true;
  #reshards = 0;
  #shardChanged: (() => void) | undefined;
  #unshard: Array<() => void> = [];
  #filledBy: InitialRequest | undefined;

  constructor(options: InformerOptions<T>) {
    this.#options = options;
    const r = options.resource;
    this.#cache = new InformerCache(options, `${kindKey(r.apiVersion, r.kind)}${options.metadataOnly ? ' (metadata)' : ''}${options.shard ? ' (share)' : ''}`);
    this.store = this.#cache.store;
    this.#backoff = new Backoff(options.backoff ?? WATCH_BACKOFF);
    this.#expiries = new Backoff(options.backoff ?? WATCH_BACKOFF);
    this.#watch = new InformerWatch(options, this.#cache, this.#position, {
      filled: () => {
        this.#needList = false;
        this.#filled('watch-list');
      },
      received: (filling) => {
        // A WatchList dropped again and again before its end backs off as a failing list would.
        if (!filling) this.#backoff.reset();
        // The watch brought something before any 410: a later 410 relists at once again.
        this.#expiries.reset();
      },
    });
  }

  get name(): string {
    return this.#cache.name;
  }
  /** Whether the cache was once complete; it stays so after stop() or the client's close() (the cache is then frozen). */
  get hasSynced(): boolean {
    return this.#synced;
  }
  get resourceVersion(): string | undefined {
    return this.#position.resourceVersion;
  }
  get restarts(): number {
    return this.#restarts;
  }
  /** How the cache was last filled whole: one WatchList, or a list; undefined before. */
  get filledBy(): InitialRequest | undefined {
    return this.#filledBy;
  }

  /** Registers a handler; returns a function that removes it. */
  on<E extends keyof InformerHandlers<T>>(event: E, handler: InformerHandlers<T>[E]): () => void {
    return this.#cache.on(event, handler);
  }

  /** The selector of the last complete list and whether the server applied it; undefined when not sharded or not listed. */
  listedShard(): ListedShard | undefined {
    const listed = this.#position.listed;
    return listed ? { selector: listed.request.selector, applied: listed.applied } : undefined;
  }

  /**
   * Runs the list/watch loop until stop(), or until its KubeClient is closed: the loop then ends by itself (logged
   * once), the cache keeps what it held, and no handler is told anything more.
   */
  start(): this {
    const shard = this.#options.shard;
    if (shard && !this.#running) this.#unshard.push(shard.track(this), shard.onChange(() => this.#reshard()));
    this.#running ??= this.#run();
    return this;
  }

  async stop(): Promise<void> {
    this.#abort.abort(new Error('informer stopped'));
    for (const off of this.#unshard.splice(0)) off();
    this.#shardChanged?.();
    await this.#running;
  }

  /** The share changed: list it (a cache of the whole collection, from a server that ignores the selector, stays). */
  #reshard(): void {
    this.#shardChanged?.();
    const listed = this.#position.listed;
    if (listed && !listed.applied) return;
    this.#reshards += 1;
    this.#needList = true;
    this.#watch.abort(new ReshardError(`share of ${this.name} changed`));
  }

  /** Until the shard names a selector there is nothing to ask for. */
  async #selectorReady(signal: AbortSignal): Promise<void> {
    while (this.#options.shard && this.#options.shard.request() === undefined && !signal.aborted) {
      await new Promise<void>((resolve) => (this.#shardChanged = resolve));
      this.#shardChanged = undefined;
    }
  }

  /**
   * Resolves after the first complete list; rejects if the informer stops first: stop(), or its KubeClient closed
   * (the error then says so, its cause the client's KubeClientClosedError).
   */
  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    const signal = this.#abort.signal;
    // Already stopped: no abort event is left to wait for.
    if (signal.aborted) return Promise.reject(notSyncedError(this.name, signal.reason));
    return new Promise((resolve, reject) => {
      this.#syncWaiters.push(resolve);
      signal.addEventListener('abort', () => reject(notSyncedError(this.name, signal.reason)), { once: true });
    });
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        if (this.#needList) {
          await this.#selectorReady(signal);
          if (signal.aborted) break;
          if (this.#initialRequest() === 'list') {
            const reshards = this.#reshards;
            await this.#list(signal);
            // The share changed while listing: list it before watching.
            this.#needList = this.#reshards !== reshards;
            if (this.#needList) continue;
          }
        }
        const started = Date.now();
        // Still to be filled: this watch is a WatchList, streaming the state first.
        await this.#watch.run(signal, this.#needList);
        // A watch the server ends at once, again and again (a proxy, say), must not spin.
        if (Date.now() - started < 1000) throw new Error(`watch of ${this.name} ended immediately`);
        // The server ended the watch at its timeout: resume from the last resourceVersion, no relist.
      } catch (error) {
        if (signal.aborted) break;
        const err = error instanceof Error ? error : new Error(String(error));
        const next = afterFailure(err, this.#expiries.attempts);
        if (next.step === 'end') {
          this.#options.logger?.info({ informer: this.name, err: err.message }, 'KubeClient closed; informer stopped');
          // As stop() would, but told why: waitForSync() callers learn it was the client's close().
          this.#abort.abort(err);
          break;
        }
        if (next.step === 'list-share') continue;
        // Not served here: list at once, and every informer on this API server from now on (paid once).
        if (next.step === 'list-instead') {
          rememberWatchListRefused(this.#options.client, err.message);
          this.#options.logger?.info({ informer: this.name, err: err.message }, 'WatchList refused; listing instead');
          continue;
        }
        this.#restart(next.reason, err);
        if (next.relist) this.#needList = true;
        const delay = (next.backoff === 'expiries' ? this.#expiries : this.#backoff).next();
        if (next.atOnce) continue;
        this.#options.logger?.warn({ informer: this.name, err: err.message, delayMs: delay }, 'watch failed; restarting');
        try {
          await sleep(delay, signal);
        } catch {
          break;
        }
        // Without a resourceVersion to resume from, only a list can rebuild the cache.
        if (this.#position.resourceVersion === undefined) this.#needList = true;
      }
    }
  }

  #restart(reason: RestartReason, error: Error): void {
    this.#restarts += 1;
    this.#cache.emit('restart', reason, error);
  }

  #initialRequest(): InitialRequest {
    const { watchList = true, client, shard } = this.#options;
    return initialRequest({ enabled: watchList, refused: watchListRefusal(client) !== undefined, sharded: shard !== undefined });
  }

  async #list(signal: AbortSignal): Promise<void> {
    const { client, resource, namespace, metadataOnly, labelSelector, fieldSelector, pageSize, shard } = this.#options;
    const request = shard?.request();
    const shardSelector = request?.selector;
    // Normalised page by page: a list of thousands of objects never holds all their managedFields at once.
    // Admitted as each page arrives, and told to `gathered` handlers (a Loop's first calls may leave before the sync).
    const gathered: AdmittedState<T> = { fresh: new Map(), refused: new Set() };
    const { items, resourceVersion, shardInfo } = await listAll<T>(client, { resource, namespace, labelSelector, fieldSelector, shardSelector, metadataOnly, pageSize, signal }, (item) => this.#cache.gatherItem(gathered, this.#cache.normalise(item)));
    const { fresh, refused } = this.#cache.listed(gathered, items);
    const position = this.#position;
    if (request) position.listed = { request, applied: serverApplied(shardInfo, items, request) };
    this.#cache.replace(fresh, refused, position.listed?.applied ? position.listed.request : undefined);
    position.resourceVersion = resourceVersion;
    this.#backoff.reset();
    if (request) shard?.listed();
    this.#filled('list');
  }

  /** The cache holds a complete state: the first time, the informer is synced. */
  #filled(by: InitialRequest): void {
    this.#filledBy = by;
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
      this.#cache.emit('synced');
    }
  }
}

/** Transform that drops managedFields: large, and no reconcile function needs them. */
export function stripManagedFields<T extends KubernetesObject>(object: T): T {
  if (object.metadata?.managedFields) delete object.metadata.managedFields;
  return object;
}
