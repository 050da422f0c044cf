// Every primary's first call once a Loop's caches are complete (loop-runner.ts), queued so the first call leaves at
// once: the first key alone in the turn of the sync (its request is made before any other key starts), the rest in
// slices, one event-loop turn each, the calls' I/O running between them. Order is kept: before anything else is
// queued for the Loop (a watch event, a resync), what is left is queued first, as if every key had been queued then.
import type { KubeObject } from '../../lib/contract/types.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';

/** Keys queued per turn after the first: a slice starts the Loop's other workers and queues the rest behind them. */
export const INITIAL_KEYS_SLICE = 128;

export interface InitialKeysOptions {
  /** The primaries in the cache at the sync, each queued with its state then. */
  objects: readonly KubeObject[];
  /** Whether a primary is still in the cache: one deleted since the sync is not queued (its delete was handled). */
  cached: (key: string) => boolean;
  /** Queues one primary's first call. */
  queue: (object: KubeObject) => void;
  slice?: number;
}

export class InitialKeys {
  readonly #o: Omit<InitialKeysOptions, 'objects'>;
  /** The primaries not queued yet from #next on; emptied once all are, so no old state of theirs stays held. */
  #objects: readonly KubeObject[];
  #next = 0;
  #turn: NodeJS.Immediate | undefined;
  #resolve: () => void = () => {};
  /** Resolves once every key is queued (or the queueing was cancelled). */
  readonly done: Promise<void>;

  constructor(options: InitialKeysOptions) {
    const { objects, ...rest } = options;
    this.#o = rest;
    this.#objects = objects;
    this.done = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** Queues the first key now and schedules the rest. */
  start(): this {
    this.#queueUpTo(1);
    this.#schedule();
    return this;
  }

  /** Queues every key left, now: something else is about to be queued for the Loop and must come after them. */
  flush(): void {
    if (!this.pending) return;
    this.#queueUpTo(this.#objects.length);
    this.#schedule();
  }

  /** Stops queueing (the runner stopped). */
  cancel(): void {
    if (this.#turn) clearImmediate(this.#turn);
    this.#turn = undefined;
    this.#finish();
  }

  get pending(): boolean {
    return this.#next < this.#objects.length;
  }

  #queueUpTo(end: number): void {
    const { cached, queue } = this.#o;
    const objects = this.#objects;
    const last = Math.min(end, objects.length);
    // Advanced before queueing, and left once another call finished the list: a queue call that reached flush().
    while (this.#objects === objects && this.#next < last) {
      const object = objects[this.#next++]!;
      if (cached(objectKey(object.metadata))) queue(object);
    }
  }

  #schedule(): void {
    if (this.#turn) clearImmediate(this.#turn);
    this.#turn = undefined;
    if (!this.pending) {
      this.#finish();
      return;
    }
    this.#turn = setImmediate(() => {
      this.#turn = undefined;
      this.#queueUpTo(this.#next + (this.#o.slice ?? INITIAL_KEYS_SLICE));
      this.#schedule();
    });
  }

  #finish(): void {
    this.#objects = [];
    this.#next = 0;
    this.#resolve();
  }
}
