// A Loop runner's side of sharding: which of its keys it may queue and start, and taking over keys it
// gains (queued from the cache, level-triggered; keys with children only once the cache shows them all).
import type { Logger } from 'pino';
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { StoreView } from '../base/informer-view.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { ownersWithSettledChildren, type ChildSource } from './children-fence.ts';
import { objectSlot } from './member-share.ts';
import type { ShardGate } from './shard-member.ts';

export interface RunnerShardOptions {
  gate: ShardGate;
  loop: LoopConfig;
  client: KubeClient;
  logger: Logger;
  primaries: () => StoreView | undefined;
  /** False until every cache of the Loop is complete: its first sync takes over what it owns then. */
  synced: () => boolean;
  children: () => ChildSource[];
  enqueue: (object: KubeObject, trigger: Trigger) => void;
  /** How long taken-over keys wait for the cache to show their children before they start anyway. */
  fenceTimeoutMs?: number;
}

const FENCE_RETRY_MS = 250;

export class RunnerShard {
  readonly #o: RunnerShardOptions;
  /** Taken-over keys waiting for the cache to show their children. */
  readonly #fencing = new Set<string>();
  #stopped = false;

  constructor(options: RunnerShardOptions) {
    this.#o = options;
  }

  /** Whether this member may queue the key of this primary (or tombstone) now. */
  owns(key: string, object: KubeObject | undefined): boolean {
    const slot = objectSlot(object);
    return slot !== undefined && !this.#fencing.has(key) && this.#o.gate.owns(this.#o.loop.id, key, slot);
  }

  /** Marks the key in flight if this member may start it; the object (cached or tombstone) gives its slot. */
  begin(key: string, object: KubeObject | undefined): (() => void) | undefined {
    const slot = objectSlot(object);
    return slot === undefined || this.#fencing.has(key) ? undefined : this.#o.gate.begin(this.#o.loop.id, key, slot);
  }

  /** Subscribes to the keys this member gains; returns the unsubscribe. */
  subscribe(): () => void {
    const off = this.#o.gate.onGained(this.#o.loop.id, (gained) => this.takeOver(gained, { type: 'RESYNC' }));
    return () => {
      this.#stopped = true;
      off();
    };
  }

  /** Primaries of this Loop this member owns under a view (its status). */
  count(owns: (slot: number) => boolean): number {
    let n = 0;
    for (const object of this.#o.primaries()?.list() ?? []) {
      const slot = objectSlot(object);
      if (slot !== undefined && owns(slot)) n += 1;
    }
    return n;
  }

  /** Queues the cached primaries that `gained` selects and this member may start; returns how many. */
  takeOver(gained: (slot: number, key: string) => boolean, trigger: Trigger): number {
    if (!this.#o.synced()) return 0;
    const name = this.#o.loop.id;
    const objects = (this.#o.primaries()?.list() ?? []).filter((o) => {
      const key = objectKey(o.metadata);
      const slot = objectSlot(o);
      return slot !== undefined && gained(slot, key) && this.#o.gate.owns(name, key, slot);
    });
    if (objects.length === 0 || this.#stopped) return objects.length;
    if (this.#o.loop.owns.length === 0) {
      for (const object of objects) this.#o.enqueue(object, trigger);
      return objects.length;
    }
    for (const object of objects) this.#fencing.add(objectKey(object.metadata));
    void this.#fence(objects, trigger);
    return objects.length;
  }

  async #fence(objects: KubeObject[], trigger: Trigger): Promise<void> {
    const deadline = performance.now() + (this.#o.fenceTimeoutMs ?? 30_000);
    let waiting = objects;
    while (waiting.length > 0 && !this.#stopped) {
      const uids = new Set(waiting.map((o) => o.metadata?.uid ?? ''));
      const expired = performance.now() > deadline;
      if (expired) this.#o.logger.warn({ loop: this.#o.loop.id, keys: waiting.length }, 'taken-over keys start although the cache does not show their children yet');
      let settled: Set<string>;
      try {
        settled = expired ? uids : await ownersWithSettledChildren(this.#o.client, this.#o.children(), this.#o.loop.namespaces, uids);
      } catch (error) {
        this.#o.logger.warn({ loop: this.#o.loop.id, err: (error as Error).message }, 'could not list children of taken-over keys; retrying');
        settled = new Set();
      }
      const ready = waiting.filter((o) => settled.has(o.metadata?.uid ?? ''));
      waiting = waiting.filter((o) => !settled.has(o.metadata?.uid ?? ''));
      for (const object of ready) {
        this.#fencing.delete(objectKey(object.metadata));
        this.#o.enqueue(object, trigger);
      }
      if (waiting.length > 0) await new Promise((resolve) => setTimeout(resolve, FENCE_RETRY_MS));
    }
    for (const object of waiting) this.#fencing.delete(objectKey(object.metadata));
  }
}
