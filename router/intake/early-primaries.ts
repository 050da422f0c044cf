// A primary's first call before its own list is complete (docs/router.md, "When a first call leaves"): once every
// other cache of the Loop is complete, each primary is queued as its list brings it (the informer's `gathered`); at
// the sync, only the primaries the list brought in another state, or never queued, are still owed a first call.
import type { KindRef } from '../../api/meta.ts';
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { InformerView } from '../base/informer-view.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { InitialKeys } from './initial-keys.ts';

/**
 * Whether a Loop's primaries may be called while their list is still arriving. Not when sharded (a member takes
 * its share over at the sync, runner-shard.ts), nor when it owns or relates to its own kind: a request would hold
 * a half-listed set of primaries, as a PodSet's would a half-listed set of pods.
 */
export function callsBeforePrimarySync(loop: Pick<LoopConfig, 'for' | 'owns' | 'related'>, sharded: boolean): boolean {
  if (sharded) return false;
  const primaryKind = (k: KindRef) => k.apiVersion === loop.for.apiVersion && k.kind === loop.for.kind;
  return !loop.owns.some(primaryKind) && !loop.related.some((r) => primaryKind(r.kind));
}

/** What is left to do at the sync for a Loop that called primaries early. */
export interface SyncSettlement {
  /** Listed primaries owed a first call: never queued early, or queued in another state (a restarted list). */
  firstCalls: KubeObject[];
  /** Primaries queued early that the complete list no longer holds (deleted, or recreated under their name). */
  gone: KubeObject[];
}

function sameState(a: KubeObject, b: KubeObject): boolean {
  return a.metadata?.uid === b.metadata?.uid && a.metadata?.resourceVersion === b.metadata?.resourceVersion;
}

/** The complete list (in its order) against the primaries queued early, by key. */
export function settleAtSync(listed: readonly KubeObject[], early: ReadonlyMap<string, KubeObject>): SyncSettlement {
  const settlement: SyncSettlement = { firstCalls: [], gone: [] };
  const keys = new Set<string>();
  for (const object of listed) {
    const key = objectKey(object.metadata);
    keys.add(key);
    const queued = early.get(key);
    if (queued && sameState(queued, object)) continue;
    if (queued && queued.metadata?.uid !== object.metadata?.uid) settlement.gone.push(queued);
    settlement.firstCalls.push(object);
  }
  for (const [key, queued] of early) if (!keys.has(key)) settlement.gone.push(queued);
  return settlement;
}

export interface EarlyPrimariesOptions {
  /** Queues one primary's first call (again for a newer state); false: not queued (not selected, stopped). */
  queue: (object: KubeObject) => boolean;
  slice?: number;
}

export class EarlyPrimaries {
  readonly #o: EarlyPrimariesOptions;
  /** The state each primary was queued in, by key and by uid (a child's controller reference names the uid). */
  readonly #queued = new Map<string, KubeObject>();
  readonly #byUid = new Map<string, KubeObject>();
  /** Gathered before every other cache was complete; undefined once open. */
  #waiting: KubeObject[] | undefined = [];
  #backlog: InitialKeys | undefined;
  #closed = false;
  #unfollow: (() => void) | undefined;

  constructor(options: EarlyPrimariesOptions) {
    this.#o = options;
  }

  /** Hears `informer`'s list (until its sync or close()), and opens once every `other` cache is complete. */
  follow(informer: Pick<InformerView, 'on' | 'waitForSync'>, others: readonly unknown[]): this {
    const off = (this.#unfollow = informer.on('gathered', (o) => this.gathered(o)));
    informer.waitForSync().then(off, off);
    Promise.all(others).then(() => this.open(), () => {});
    return this;
  }

  /** The primary's list brought an object (informer `gathered`). */
  gathered(object: KubeObject): void {
    if (this.#closed) return;
    if (this.#waiting) {
      this.#waiting.push(object);
      return;
    }
    this.flush();
    this.#queue(object);
  }

  /** Every other cache is complete: what was gathered so far is queued, the first key at once (initial-keys.ts). */
  open(): void {
    const waiting = this.#waiting;
    if (!waiting || this.#closed) return;
    this.#waiting = undefined;
    this.#backlog = new InitialKeys({ objects: waiting, cached: () => true, queue: (o) => this.#queue(o), ...(this.#o.slice ? { slice: this.#o.slice } : {}) }).start();
  }

  /** Queues what was gathered before open() and is not queued yet: something else is about to be queued. */
  flush(): void {
    this.#backlog?.flush();
  }

  /** The state a primary was queued in, until the sync (the reconcile reads it: the cache holds it only then). */
  get(key: string): KubeObject | undefined {
    return this.#queued.get(key);
  }

  byUid(uid: string): KubeObject | undefined {
    return this.#byUid.get(uid);
  }

  /** Before the sync, a child's or related object's change reaches a primary called early: its call read them. */
  hears(key: string, trigger: Trigger): boolean {
    return (trigger.type === 'CHILD' || trigger.type === 'RELATED') && this.#queued.has(key);
  }

  /** The primary's list is complete (or the runner stopped): what is still owed, and nothing is held any more. */
  close(listed: readonly KubeObject[]): SyncSettlement {
    this.#closed = true;
    this.#unfollow?.();
    this.#waiting = undefined;
    this.#backlog?.cancel();
    const settlement = settleAtSync(listed, this.#queued);
    this.#queued.clear();
    this.#byUid.clear();
    return settlement;
  }

  #queue(object: KubeObject): void {
    const key = objectKey(object.metadata);
    const previous = this.#queued.get(key);
    if (previous && sameState(previous, object)) return;
    // Held before it is queued: the queue may start its reconcile, which reads it, at once.
    this.#hold(key, object, previous);
    if (!this.#o.queue(object)) this.#hold(key, previous, object);
  }

  #hold(key: string, object: KubeObject | undefined, replaced: KubeObject | undefined): void {
    if (replaced?.metadata?.uid) this.#byUid.delete(replaced.metadata.uid);
    if (!object) this.#queued.delete(key);
    else this.#queued.set(key, object);
    if (object?.metadata?.uid) this.#byUid.set(object.metadata.uid, object);
  }
}
