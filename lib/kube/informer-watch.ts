// One watch of an informer (client-go's reflector's watchHandler): opened from the last resourceVersion, or as a
// WatchList that streams the state first; a watchdog (watch-watchdog.ts) ends it when it outlives its timeout or goes
// silent; its events go to the cache. The loop that lists, watches again and backs off is informer.ts; the cache is
// informer-cache.ts.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeClient } from './kube-client.ts';
import type { AdmittedState, InformerCache } from './informer-cache.ts';
import { collectionPath, type ResourceInfo } from './resource-paths.ts';
import { consumeWatchBody } from './watch-body.ts';
import { METADATA_OBJECT_ACCEPT } from './metadata-media-types.ts';
import { endedBeforeItsEnd, refusesWatchList, watchListQuery, WatchListRefusedError } from './watch-list.ts';
import { ReshardError, SilentWatchError, watchErrorEvent } from './watch-errors.ts';
import type { ShardRequest } from './shard-selector.ts';
import { fillDeadlineMs, watchTimeoutSeconds, WatchWatchdog, type WatchTimeouts } from './watch-watchdog.ts';

/** What a watch reads of the informer's options (InformerOptions, informer.ts, documents each). */
export interface WatchOptions extends WatchTimeouts {
  client: KubeClient;
  resource: ResourceInfo;
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  metadataOnly?: boolean | undefined;
  maxValues?: number | undefined;
}

/** Where the list/watch loop stands, which its list sets and its watches move on. */
export interface WatchPosition {
  /** The version the next watch resumes from. */
  resourceVersion: string | undefined;
  /** The share of the last complete list, and whether the server applied it. */
  listed: { request: ShardRequest; applied: boolean } | undefined;
  /** The server has sent one of these watches a bookmark: it sends them (its watch cache does, each minute). */
  bookmarked: boolean;
}

/** What the loop hears of a watch. */
export interface WatchProgress {
  /** A WatchList's initial state is complete and replaced the cache. */
  filled(): void;
  /** The events of one chunk were applied; `filling`: the WatchList's initial state is still incomplete. */
  received(filling: boolean): void;
}

export class InformerWatch<T extends KubernetesObject> {
  readonly #options: WatchOptions;
  readonly #cache: InformerCache<T>;
  readonly #position: WatchPosition;
  readonly #progress: WatchProgress;
  #watchAbort: AbortController | undefined;
  #watchdog: WatchWatchdog | undefined;

  constructor(options: WatchOptions, cache: InformerCache<T>, position: WatchPosition, progress: WatchProgress) {
    this.#options = options;
    this.#cache = cache;
    this.#position = position;
    this.#progress = progress;
  }

  get name(): string {
    return this.#cache.name;
  }

  /** Ends the watch open now, if one is, with `reason` (a ReshardError: the loop lists the new share). */
  abort(reason: Error): void {
    this.#watchAbort?.abort(reason);
  }

  /** `fill`: a WatchList, its initial events gathered into a state that replaces the cache at their end. */
  async run(parent: AbortSignal, fill: boolean): Promise<void> {
    const { client, resource, namespace, metadataOnly } = this.#options;
    const position = this.#position;
    const timeoutSeconds = watchTimeoutSeconds(this.#options, position.bookmarked, fill, Math.random());
    const controller = new AbortController();
    this.#watchAbort = controller;
    const onParentAbort = () => controller.abort(parent.reason);
    parent.addEventListener('abort', onParentAbort, { once: true });
    // stop() may have run between the list and this watch: an abort before the listener never fires.
    if (parent.aborted) controller.abort(parent.reason);
    const watchdog = new WatchWatchdog(this.#options, timeoutSeconds, (message) => controller.abort(new SilentWatchError(`watch of ${this.name} ${message}`)));
    this.#watchdog = watchdog;
    if (position.bookmarked) watchdog.countSilence();
    // The state streamed so far, until the initial-events-end bookmark; then undefined.
    let filling: AdmittedState<T> | undefined = fill ? { fresh: new Map(), refused: new Set() } : undefined;
    // A WatchList asks for the long timeout; one still without its end at the short one was taken for a plain watch.
    if (fill) {
      const deadlineMs = fillDeadlineMs(this.#options, Math.random());
      watchdog.expectFill(deadlineMs, () => controller.abort(new WatchListRefusedError(`WatchList of ${this.name} sent no initial-events-end bookmark in ${deadlineMs / 1000}s`)));
    }
    const opened = Date.now();
    try {
      const request = fill ? watchListQuery() : { watch: true, resourceVersion: this.#position.resourceVersion, allowWatchBookmarks: true };
      const { body, contentType } = await client
        .streamResponse({ path: collectionPath(resource, namespace), accept: metadataOnly ? METADATA_OBJECT_ACCEPT : 'application/json', signal: controller.signal, timeoutMs: 30_000, query: { ...this.#query(), ...request, timeoutSeconds } })
        .catch((error: unknown) => {
          throw fill && refusesWatchList(error) ? new WatchListRefusedError(error instanceof Error ? error.message : String(error)) : error;
        });
      this.#cache.emit('watching');
      try {
        // Counted before each event is parsed, each parsed as its line arrives (overlapping the transfer): an object
        // over the budget never becomes an object graph. A chunk's events in its own turn: one wake-up per burst.
        await consumeWatchBody<T>(body, contentType, { maxObjectValues: this.#options.maxValues }, (batch) => {
          watchdog.heard();
          for (const event of batch) {
            if (!filling || event.type === 'ERROR') this.#handleEvent(event.type, event.object, event.oversized === true, event.withinBudget === true);
            else if (this.#cache.gather(filling, event)) {
              // The initial state is complete: it replaces the cache (deleting, as a relist does, what is gone).
              this.#cache.replace(filling.fresh, filling.refused, undefined);
              filling = undefined;
              watchdog.filled();
              position.resourceVersion = event.object.metadata?.resourceVersion;
              this.#heardBookmark();
              this.#progress.filled();
            }
          }
          this.#progress.received(filling !== undefined);
        });
      } finally {
        body.destroy();
      }
      // Ended by the server without the bookmark: at its timeout, it ignored sendInitialEvents; earlier, ask again.
      if (filling && endedBeforeItsEnd(Date.now() - opened, timeoutSeconds) === 'ignored') throw new WatchListRefusedError(`WatchList of ${this.name} ended at its timeout without the initial-events-end bookmark`);
      if (filling) throw new Error(`WatchList of ${this.name} ended before its initial state was complete`);
    } catch (error) {
      // Ended by its watchdog, its fill deadline or for a new share: that, not the abort it caused, is why.
      const reason: unknown = controller.signal.reason;
      if (reason instanceof SilentWatchError || reason instanceof ReshardError || reason instanceof WatchListRefusedError) throw reason;
      throw error;
    } finally {
      this.#watchAbort = undefined;
      this.#watchdog = undefined;
      watchdog.stop();
      parent.removeEventListener('abort', onParentAbort);
    }
  }

  /** From the first bookmark on, this watch counts silence and the next ones may be long. */
  #heardBookmark(): void {
    this.#position.bookmarked = true;
    this.#watchdog?.countSilence();
  }

  #query(): Record<string, string | number | boolean | undefined> {
    // The watch asks for what the list got: a share only if the server applied it to the list.
    const listed = this.#position.listed;
    const shardSelector = listed?.applied ? listed.request.selector : undefined;
    return { labelSelector: this.#options.labelSelector, fieldSelector: this.#options.fieldSelector, shardSelector };
  }

  /**
   * `oversized`: the event was over the value budget and `raw` is its metadata alone (refused unparsed);
   * `withinBudget`: its line was too short to be over it (not counted again).
   */
  #handleEvent(type: string, raw: T, oversized: boolean, withinBudget: boolean): void {
    if (type === 'ERROR') throw watchErrorEvent(this.name, raw);
    const position = this.#position;
    const resourceVersion = raw.metadata?.resourceVersion;
    if (type === 'BOOKMARK') {
      if (resourceVersion) position.resourceVersion = resourceVersion;
      this.#heardBookmark();
      this.#cache.emit('bookmark');
      return;
    }
    const object = this.#cache.normalise(raw);
    // An object outside the share: this server ignores the selector (its list had nothing else to show it).
    if (position.listed?.applied && !position.listed.request.contains(object)) position.listed = { ...position.listed, applied: false };
    this.#cache.apply(type, object, oversized, withinBudget);
    if (resourceVersion) position.resourceVersion = resourceVersion;
  }
}
