// The informer's cache (client-go's store beside its reflector, informer.ts): the indexed objects, the
// handlers told of each change (a handler that throws stops no other), and the value budget that keeps an
// object of countless tiny values out of memory. It applies what the list/watch loop brings; it does no I/O.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { countValues } from '../contract/json-depth.ts';
import { ObjectStore, type IndexFunction } from './object-store.ts';
import { objectKey } from './object-meta.ts';
import type { ResourceInfo } from './resource-paths.ts';
import type { ShardRequest } from './shard-selector.ts';
import type { WatchEvent } from './watch-stream.ts';
import { isInitialEventsEnd } from './watch-list.ts';

export interface InformerHandlers<T> {
  add: (object: T) => void;
  update: (object: T, previous: T) => void;
  delete: (object: T) => void;
  /** After the first complete list. */
  synced: () => void;
  /** Every restart of the list/watch cycle, with its reason (gone, error, silent). */
  restart: (reason: RestartReason, error?: Error) => void;
  /** The server accepted a watch (its answer's head came): after a restart, the informer is receiving again. */
  watching: () => void;
  /**
   * One object of a complete state being gathered (a WatchList's initial events, a paged list's items), as it is
   * decoded and admitted: the cache holds it only once the state is complete (add/update at its replace()).
   */
  gathered: (object: T) => void;
  /**
   * A watch bookmark: the server's progress mark, nothing changed. The API server sends one about once a minute on
   * every watch that asks for them, however quiet (its watch cache's bookmark frequency).
   */
  bookmark: () => void;
}
export type RestartReason = 'gone' | 'error' | 'silent';
/** A complete state to replace() the cache with: objects by key, and the keys of those refused for their values. */
export interface AdmittedState<T> {
  fresh: Map<string, T>;
  refused: Set<string>;
}
type HandlerSets<T> = { [E in keyof InformerHandlers<T>]: Set<InformerHandlers<T>[E]> };

/** What the cache needs of the informer's options. */
export interface InformerCacheOptions<T extends KubernetesObject> {
  resource: ResourceInfo;
  transform?: ((object: T) => T) | undefined;
  maxValues?: number | undefined;
  onRefused?: ((object: T, values: number) => void) | undefined;
  indexers?: Record<string, IndexFunction<T>> | undefined;
  logger?: Logger | undefined;
}

export class InformerCache<T extends KubernetesObject> {
  readonly store: ObjectStore<T>;
  readonly #handlers: HandlerSets<T> = { add: new Set(), update: new Set(), delete: new Set(), synced: new Set(), restart: new Set(), watching: new Set(), gathered: new Set(), bookmark: new Set() };

  constructor(
    private readonly options: InformerCacheOptions<T>,
    /** The informer's name, for logs. */
    readonly name: string,
  ) {
    this.store = new ObjectStore<T>(options.indexers);
  }

  /** Registers a handler; returns a function that removes it. */
  on<E extends keyof InformerHandlers<T>>(event: E, handler: InformerHandlers<T>[E]): () => void {
    const set = this.#handlers[event] as Set<InformerHandlers<T>[E]>;
    set.add(handler);
    return () => set.delete(handler);
  }

  /** One item of a paged list (normalised) into `state`, as its page arrives; told to `gathered` when admitted. */
  gatherItem(state: AdmittedState<T>, object: T): T {
    this.admitOne(state, object, false);
    if (state.fresh.get(objectKey(object.metadata)) === object) this.emit('gathered', object);
    return object;
  }

  /**
   * A paged list's state: its items by key, those over the value budget apart (as gatherItem found them: a list
   * restarted after its continue token expired gathered items its final `items` no longer hold).
   */
  listed(state: AdmittedState<T>, items: readonly T[]): AdmittedState<T> {
    const listed: AdmittedState<T> = { fresh: new Map(), refused: new Set() };
    for (const object of items) {
      const key = objectKey(object.metadata);
      if (state.refused.has(key)) listed.refused.add(key);
      else listed.fresh.set(key, object);
    }
    return listed;
  }

  /**
   * One object of a state being gathered (a WatchList's initial events, as each arrives) into `state`; flags as
   * apply()'s: `oversized`, its metadata alone, refused unparsed; `withinBudget`, not counted again.
   */
  admitOne(state: AdmittedState<T>, object: T, oversized: boolean, withinBudget = false): void {
    const key = objectKey(object.metadata);
    if (oversized ? this.#report(object) : !withinBudget && this.#refused(object)) {
      state.fresh.delete(key);
      state.refused.add(key);
    } else {
      state.refused.delete(key);
      state.fresh.set(key, object);
    }
  }

  /**
   * Swaps in a fresh list, emitting what changed since the previous view (events missed while away). `share`:
   * the share the server applied to the list, whose leavers are another member's (forgotten, not deleted).
   */
  replace(fresh: Map<string, T>, refused: ReadonlySet<string>, share: ShardRequest | undefined): void {
    const store = this.store;
    for (const key of [...store.keys()]) {
      if (!fresh.has(key)) {
        const gone = store.delete(key);
        // A refused object still exists, and one that left the share is another member's: forgotten, not deleted.
        if (gone && !refused.has(key) && (!share || share.contains(gone))) this.emit('delete', gone);
      }
    }
    for (const [key, object] of fresh) {
      // Deleted and created again under the same name while away: two objects (handlers keyed by uid, owner
      // indexes), so a delete of the old one and an add of the new, as the watch would have told them.
      const cached = store.get(key);
      if (cached && cached.metadata?.uid !== object.metadata?.uid) {
        store.delete(key);
        this.emit('delete', cached);
      }
      const previous = store.upsert(object);
      if (!previous) this.emit('add', object);
      else if (previous.metadata?.resourceVersion !== object.metadata?.resourceVersion) this.emit('update', object, previous);
    }
  }

  /**
   * One watch event's (normalised) object. `oversized`: over the value budget, `object` is its metadata alone;
   * `withinBudget`: known to be under it (its line was shorter), so not walked to count its values.
   */
  apply(type: string, object: T, oversized: boolean, withinBudget = false): void {
    const key = objectKey(object.metadata);
    if (type === 'DELETED') {
      const gone = this.store.delete(key);
      // An oversized object's last state is known by its metadata only; a cached older version says more.
      this.emit('delete', oversized ? (gone ?? object) : object);
    } else if (oversized ? this.#report(object) : !withinBudget && this.#refused(object)) {
      this.store.delete(key);
    } else if (type === 'ADDED' || type === 'MODIFIED') {
      const previous = this.store.upsert(object);
      if (previous) this.emit('update', object, previous);
      else this.emit('add', object);
    }
  }

  /**
   * One event of a WatchList's initial state (watch-list.ts) into `state`, as it arrives; true at the bookmark
   * ending them, when `state` is complete. Other bookmarks carry only progress; an ERROR is the caller's.
   */
  gather(state: AdmittedState<T>, event: WatchEvent<T>): boolean {
    if (event.type === 'BOOKMARK') return isInitialEventsEnd(event.type, event.object);
    const object = this.normalise(event.object);
    if (event.type === 'DELETED') {
      const key = objectKey(object.metadata);
      state.fresh.delete(key);
      state.refused.delete(key);
    } else {
      this.admitOne(state, object, event.oversized === true, event.withinBudget === true);
      if (state.fresh.get(objectKey(object.metadata)) === object) this.emit('gathered', object);
    }
    return false;
  }

  /** List items and metadata-only objects lack the real apiVersion/kind; functions need them. */
  normalise(item: T): T {
    const { resource, transform } = this.options;
    item.apiVersion = resource.apiVersion;
    item.kind = resource.kind;
    return transform ? transform(item) : item;
  }

  /** Over the value budget: reported, and to be left out of the cache. */
  #refused(object: T): boolean {
    const { maxValues } = this.options;
    if (maxValues === undefined) return false;
    const values = countValues(object, maxValues);
    if (values <= maxValues) return false;
    return this.#report(object, values);
  }

  /** Reports an object refused for its values (counted from its text: then at least maxValues + 1). */
  #report(object: T, values = (this.options.maxValues ?? 0) + 1): true {
    this.options.logger?.warn({ key: objectKey(object.metadata), maxValues: this.options.maxValues }, 'object over the value budget: not cached');
    this.options.onRefused?.(object, values);
    return true;
  }

  emit<E extends keyof InformerHandlers<T>>(event: E, ...args: Parameters<InformerHandlers<T>[E]>): void {
    for (const handler of this.#handlers[event]) {
      try {
        (handler as (...a: Parameters<InformerHandlers<T>[E]>) => void)(...args);
      } catch (error) {
        // A broken handler must not stop the watch for every other consumer.
        this.options.logger?.error({ informer: this.name, event, err: error instanceof Error ? error.message : String(error) }, 'informer handler threw');
      }
    }
  }
}
