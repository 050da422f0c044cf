// The share of a member's primaries asked of the API server (server-side sharded list and watch): the
// slots it owns in its target view as one shardSelector, and whether its sharded caches hold that share.
import type { KubernetesObject } from '@kubernetes/client-node';
import { shardSelector, shardSlot, SLOTS, type InformerShard, type ShardedCache, type ShardRequest } from '../../lib/kube/shard-selector.ts';

/** Only the uid shards every kind the same way, cluster-scoped ones included (docs/sharding.md). */
export const SHARD_FIELD = 'object.metadata.uid';

/** The slot of an object's uid; undefined for an object without one (never from the API server). */
export function objectSlot(object: KubernetesObject | undefined): number | undefined {
  const uid = object?.metadata?.uid;
  return uid ? shardSlot(uid) : undefined;
}

export class MemberShare implements InformerShard {
  readonly #listeners = new Set<() => void>();
  readonly #caches = new Set<ShardedCache>();
  #request: ShardRequest | undefined;
  #view: string | undefined;
  /** Called when a tracked cache completed a list (the member may adopt its target now). */
  onListed: (() => void) | undefined;

  /** The member's slots in its target view; the caches list again when the selector changes. */
  set(slots: readonly number[], view: string): void {
    this.#view = view;
    const selector = shardSelector(SHARD_FIELD, slots);
    if (selector === this.#request?.selector) return;
    const inShare = new Uint8Array(SLOTS);
    for (const slot of slots) inShare[slot] = 1;
    this.#request = selector === undefined ? undefined : {
      selector,
      contains: (object: KubernetesObject) => {
        const slot = objectSlot(object);
        return slot !== undefined && inShare[slot] === 1;
      },
    };
    for (const listener of this.#listeners) listener();
  }

  request(): ShardRequest | undefined {
    return this.#request;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  track(cache: ShardedCache): () => void {
    this.#caches.add(cache);
    return () => this.#caches.delete(cache);
  }

  listed(): void {
    this.onListed?.();
  }

  /**
   * Whether every sharded cache holds the share of this view: it listed with its selector, or the server
   * ignored the selector (no shardInfo: an older API server, the whole collection is cached), or it has
   * not listed yet (its first list, whole, is taken over when its Loop's caches are complete).
   */
  covers(view: string): boolean {
    if (view !== this.#view) return false;
    for (const cache of this.#caches) {
      const listed = cache.listedShard();
      if (listed && listed.applied && listed.selector !== this.#request?.selector) return false;
    }
    return true;
  }

  /** How the caches hold the share: 'server' when every listed cache got it filtered, 'client' when one got everything. */
  mode(): 'server' | 'client' | 'unknown' {
    let mode: 'server' | 'client' | 'unknown' = 'unknown';
    for (const cache of this.#caches) {
      const listed = cache.listedShard();
      if (!listed) continue;
      if (!listed.applied) return 'client';
      mode = 'server';
    }
    return mode;
  }
}
