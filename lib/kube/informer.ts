// A resilient informer's list/watch loop (client-go's reflector; its cache is informer-cache.ts): a WatchList
// (watch-list.ts) or a list, then watch from its resourceVersion; relist on 410 Gone (backing off if 410s follow
// relists); restart with backoff on any other error; a watchdog ends silent watches; bookmarks; metadata-only
// mode; server-side sharded list and watch of a share that may change (lists again when it does).
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Backoff, sleep, type BackoffPolicy } from './backoff.ts';
import { isApiError, type KubeClient } from './kube-client.ts';
import type { IndexFunction, ObjectStore } from './object-store.ts';
import { InformerCache, type AdmittedState, type InformerHandlers, type RestartReason } from './informer-cache.ts';
import { collectionPath, kindKey, type ResourceInfo } from './resource-paths.ts';
import { readWatchBodyBatches } from './watch-body.ts';
import { METADATA_WATCH_ACCEPT } from './metadata-media-types.ts';
import { endedBeforeItsEnd, initialRequest, rememberWatchListRefused, refusesWatchList, watchListQuery, watchListRefusal, WatchListRefusedError, type InitialRequest } from './watch-list.ts';
import { ReshardError, SilentWatchError, WatchGoneError, watchErrorEvent } from './watch-errors.ts';
import { listAll } from './list-all.ts';
import { serverApplied, type InformerShard, type ListedShard, type ShardRequest } from './shard-selector.ts';

/** The server-side watch timeout's base when not told (randomised up to twice this). */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;

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
  /** Server-side watch timeout; each watch picks a value in [t, 2t) so informers do not reconnect in step. */
  watchTimeoutSeconds?: number;
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
  readonly #abort = new AbortController();
  readonly #backoff: Backoff;
  /** 410s in a row, each right after the relist of the one before. */
  readonly #expiries: Backoff;
  #resourceVersion: string | undefined;
  #synced = false;
  #syncWaiters: Array<() => void> = [];
  #running: Promise<void> | undefined;
  #restarts = 0;
  #needList = true;
  #reshards = 0;
  #listed: { request: ShardRequest; applied: boolean } | undefined;
  #watchAbort: AbortController | undefined;
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
  }

  get name(): string {
    return this.#cache.name;
  }
  get hasSynced(): boolean {
    return this.#synced;
  }
  get resourceVersion(): string | undefined {
    return this.#resourceVersion;
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
    return this.#listed ? { selector: this.#listed.request.selector, applied: this.#listed.applied } : undefined;
  }

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
    if (this.#listed && !this.#listed.applied) return;
    this.#reshards += 1;
    this.#needList = true;
    this.#watchAbort?.abort(new ReshardError(`share of ${this.name} changed`));
  }

  /** Until the shard names a selector there is nothing to ask for. */
  async #selectorReady(signal: AbortSignal): Promise<void> {
    while (this.#options.shard && this.#options.shard.request() === undefined && !signal.aborted) {
      await new Promise<void>((resolve) => (this.#shardChanged = resolve));
      this.#shardChanged = undefined;
    }
  }

  /** Resolves after the first complete list; rejects if the informer is stopped first. */
  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.#syncWaiters.push(resolve);
      this.#abort.signal.addEventListener('abort', () => reject(new Error(`informer ${this.name} stopped before it synced`)), { once: true });
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
        await this.#watch(signal, this.#needList);
        // A watch the server ends at once, again and again (a proxy, say), must not spin.
        if (Date.now() - started < 1000) throw new Error(`watch of ${this.name} ended immediately`);
        // The server ended the watch at its timeout: resume from the last resourceVersion, no relist.
      } catch (error) {
        if (signal.aborted) break;
        const err = error instanceof Error ? error : new Error(String(error));
        // A new share: list it at once (the watch was ended for it).
        if (err instanceof ReshardError) continue;
        // Not served here: list at once, and every informer on this API server from now on (paid once).
        if (err instanceof WatchListRefusedError) {
          rememberWatchListRefused(this.#options.client, err.message);
          this.#options.logger?.info({ informer: this.name, err: err.message }, 'WatchList refused; listing instead');
          continue;
        }
        const gone = err instanceof WatchGoneError || isApiError(err, 410);
        this.#restart(gone ? 'gone' : err instanceof SilentWatchError ? 'silent' : 'error', err);
        // 410: our resourceVersion is older than the server's window; relist at once, unless the last relist's watch
        // expired too before it brought anything: no hot loop of full lists (client-go backs off there too).
        if (gone) this.#needList = true;
        if (gone && this.#expiries.attempts === 0) {
          this.#expiries.next();
          continue;
        }
        const delay = gone ? this.#expiries.next() : this.#backoff.next();
        this.#options.logger?.warn({ informer: this.name, err: err.message, delayMs: delay }, 'watch failed; restarting');
        try {
          await sleep(delay, signal);
        } catch {
          break;
        }
        // Without a resourceVersion to resume from, only a list can rebuild the cache.
        if (this.#resourceVersion === undefined) this.#needList = true;
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

  #query(): Record<string, string | number | boolean | undefined> {
    // The watch asks for what the list got: a share only if the server applied it to the list.
    const shardSelector = this.#listed?.applied ? this.#listed.request.selector : undefined;
    return { labelSelector: this.#options.labelSelector, fieldSelector: this.#options.fieldSelector, shardSelector };
  }

  async #list(signal: AbortSignal): Promise<void> {
    const { client, resource, namespace, metadataOnly, labelSelector, fieldSelector, pageSize, shard } = this.#options;
    const request = shard?.request();
    const shardSelector = request?.selector;
    // Normalised page by page: a list of thousands of objects never holds all their managedFields at once.
    const { items, resourceVersion, shardInfo } = await listAll<T>(client, { resource, namespace, labelSelector, fieldSelector, shardSelector, metadataOnly, pageSize, signal }, (item) => this.#cache.normalise(item));
    const { fresh, refused } = this.#cache.admit(items);
    if (request) this.#listed = { request, applied: serverApplied(shardInfo, items, request) };
    this.#cache.replace(fresh, refused, this.#listed?.applied ? this.#listed.request : undefined);
    this.#resourceVersion = resourceVersion;
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

  /** `fill`: a WatchList, its initial events gathered into a state that replaces the cache at their end. */
  async #watch(parent: AbortSignal, fill: boolean): Promise<void> {
    const { client, resource, namespace, metadataOnly } = this.#options;
    const base = this.#options.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    const timeoutSeconds = Math.floor(base * (1 + Math.random()));
    const controller = new AbortController();
    this.#watchAbort = controller;
    const onParentAbort = () => controller.abort(parent.reason);
    parent.addEventListener('abort', onParentAbort, { once: true });
    // stop() may have run between the list and this watch: an abort before the listener never fires.
    if (parent.aborted) controller.abort(parent.reason);
    // The server closes the watch after timeoutSeconds; if it has not by then plus grace, the
    // connection is dead without either side noticing (Pepr #745): abort and reconnect.
    let silent = false;
    const watchdog = setTimeout(() => {
      silent = true;
      controller.abort(new SilentWatchError(`watch of ${this.name} still open ${timeoutSeconds}s after its timeout`));
    }, timeoutSeconds * 1000 + (this.#options.watchdogGraceMs ?? 30_000));
    // The state streamed so far, until the initial-events-end bookmark; then undefined.
    let filling: AdmittedState<T> | undefined = fill ? { fresh: new Map(), refused: new Set() } : undefined;
    const opened = Date.now();
    try {
      const request = fill ? watchListQuery() : { watch: true, resourceVersion: this.#resourceVersion, allowWatchBookmarks: true };
      const { body, contentType } = await client
        .streamResponse({ path: collectionPath(resource, namespace), accept: metadataOnly ? METADATA_WATCH_ACCEPT : 'application/json', signal: controller.signal, timeoutMs: 30_000, query: { ...this.#query(), ...request, timeoutSeconds } })
        .catch((error: unknown) => {
          throw fill && refusesWatchList(error) ? new WatchListRefusedError(error instanceof Error ? error.message : String(error)) : error;
        });
      this.#cache.emit('watching');
      try {
        // Counted before each event is parsed, each parsed as its line arrives (overlapping the transfer): an object
        // over the budget never becomes an object graph. A chunk's events in one turn: one wake-up per burst.
        for await (const batch of readWatchBodyBatches<T>(body, contentType, { maxObjectValues: this.#options.maxValues })) {
          for (const event of batch) {
            if (!filling || event.type === 'ERROR') this.#handleEvent(event.type, event.object, event.oversized === true, event.withinBudget === true);
            else if (this.#cache.gather(filling, event)) {
              // The initial state is complete: it replaces the cache (deleting, as a relist does, what is gone).
              this.#cache.replace(filling.fresh, filling.refused, undefined);
              filling = undefined;
              this.#resourceVersion = event.object.metadata?.resourceVersion;
              this.#needList = false;
              this.#filled('watch-list');
            }
          }
          // A WatchList dropped again and again before its end backs off as a failing list would.
          if (!filling) this.#backoff.reset();
          // The watch brought something before any 410: a later 410 relists at once again.
          this.#expiries.reset();
        }
      } finally {
        body.destroy();
      }
      // Ended by the server without the bookmark: at its timeout, it ignored sendInitialEvents; earlier, ask again.
      if (filling && endedBeforeItsEnd(Date.now() - opened, timeoutSeconds) === 'ignored') throw new WatchListRefusedError(`WatchList of ${this.name} ended at its timeout without the initial-events-end bookmark`);
      if (filling) throw new Error(`WatchList of ${this.name} ended before its initial state was complete`);
    } catch (error) {
      if (silent) throw new SilentWatchError(`watch of ${this.name} went silent`);
      if (controller.signal.reason instanceof ReshardError) throw controller.signal.reason;
      throw error;
    } finally {
      this.#watchAbort = undefined;
      clearTimeout(watchdog);
      parent.removeEventListener('abort', onParentAbort);
    }
  }

  /**
   * `oversized`: the event was over the value budget and `raw` is its metadata alone (refused unparsed);
   * `withinBudget`: its line was too short to be over it (not counted again).
   */
  #handleEvent(type: string, raw: T, oversized: boolean, withinBudget: boolean): void {
    if (type === 'ERROR') throw watchErrorEvent(this.name, raw);
    const resourceVersion = raw.metadata?.resourceVersion;
    if (type === 'BOOKMARK') {
      if (resourceVersion) this.#resourceVersion = resourceVersion;
      return;
    }
    const object = this.#cache.normalise(raw);
    // An object outside the share: this server ignores the selector (its list had nothing else to show it).
    if (this.#listed?.applied && !this.#listed.request.contains(object)) this.#listed = { ...this.#listed, applied: false };
    this.#cache.apply(type, object, oversized, withinBudget);
    if (resourceVersion) this.#resourceVersion = resourceVersion;
  }
}

/** Transform that drops managedFields: large, and no reconcile function needs them. */
export function stripManagedFields<T extends KubernetesObject>(object: T): T {
  if (object.metadata?.managedFields) delete object.metadata.managedFields;
  return object;
}
