// The per-Loop work queue: one entry per primary key, coalesced while waiting; never two workers on the
// same key; a concurrency limit; per-key exponential backoff; delayed adds; and two priorities so a
// periodic resync never queues ahead of real changes (Metacontroller #78). A worker may carry a group of
// keys while a backlog waits (groupMax; worker-turns.ts).
import { backoffDelay, type BackoffPolicy } from '../../lib/kube/backoff.ts';
import type { FairScheduler, FlowHandle } from './fair-scheduler.ts';
import { ALONE, companionsFor, WorkerTurns, type WorkerShare } from './worker-turns.ts';

export type Priority = 'high' | 'low';

export interface QueueItem<T> {
  key: string;
  payload: T;
  priority: Priority;
  /** When the key started waiting (ms, the queue's clock); the wait-time metric. */
  enqueuedAt: number;
}

export interface WorkQueueOptions<T> {
  concurrency: number;
  /**
   * Processes one key; the queue guarantees no other call for the same key runs meanwhile. `share` is what the
   * key shares with the other keys its worker carries (ALONE without groups).
   */
  process: (item: QueueItem<T>, share: WorkerShare) => Promise<void>;
  /**
   * The most keys one worker carries at once (1 by default: a key per worker). A worker takes more only for a
   * backlog, and only keys no free worker could start (companionsFor): they run together and take turns for what
   * `process` runs in turn (share.turn), so a backlog's keys can share a function request while the worker's
   * writes stay one at a time.
   */
  groupMax?: number;
  /** Combines the payload of a waiting key with a new one; the newest wins when omitted. */
  merge?: (waiting: T, incoming: T) => T;
  backoff?: BackoffPolicy;
  now?: () => number;
  /** Called with anything `process` threw; the queue itself never rethrows. */
  onError?: (key: string, error: unknown) => void;
  /** Counts every add (workqueue_adds_total) and every add with a delay (workqueue_retries_total). */
  onAdd?: () => void;
  onDelayedAdd?: () => void;
  /**
   * A key's call ended while an add for it waited (dirty): true when the caller settled that add itself (the
   * watch event of the router's own write), so the key does not run again for it.
   */
  settleDirty?: (key: string, payload: T) => boolean;
  /**
   * The router-wide cap on calls in flight, shared fairly across tenants: with it, every call also waits for
   * a slot (fair-scheduler.ts); the per-key guarantee and `concurrency` hold as without it.
   */
  fairShare?: { scheduler: FairScheduler; tenant: string; id: string };
}

interface Timer<T> {
  due: number;
  payload: T;
  handle: NodeJS.Timeout;
  /** A failure's retry (addRateLimited), which forget() cancels: once the key succeeded it is moot. */
  retry?: boolean;
  /** The earliest plain delayed add (a requeue-after) this retry stands in for, armed again if the retry is cancelled. */
  shadowed?: { due: number; payload: T };
}

// 5 ms doubling to 60 s: a conflict retries after a few milliseconds, once the watch has caught up; a function
// that is down is probed at least once a minute.
export const DEFAULT_QUEUE_BACKOFF: BackoffPolicy = { baseMs: 5, maxMs: 60_000, jitter: 0.1 };
/** The longest delay Node's setTimeout honours (2^31-1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class WorkQueue<T> {
  readonly #options: WorkQueueOptions<T>;
  readonly #now: () => number;
  readonly #high = new Set<string>();
  readonly #low = new Set<string>();
  readonly #waiting = new Map<string, QueueItem<T>>();
  readonly #processing = new Set<string>();
  readonly #dirty = new Map<string, QueueItem<T>>();
  readonly #timers = new Map<string, Timer<T>>();
  readonly #failures = new Map<string, number>();
  readonly #concurrency: number;
  #active = 0;
  #stopped = false;
  readonly #slots: FlowHandle | undefined;
  #idleWaiters: Array<() => void> = [];

  constructor(options: WorkQueueOptions<T>) {
    this.#options = options;
    this.#concurrency = Math.max(1, Math.floor(options.concurrency));
    this.#now = options.now ?? (() => performance.now());
    const share = options.fairShare;
    this.#slots = share?.scheduler.register({ tenant: share.tenant, id: share.id, start: () => this.#startNext(), wantsMore: () => this.#canStart() });
  }

  /** Keys waiting to run (not counting in-flight or delayed ones). */
  get depth(): number {
    return this.#waiting.size;
  }
  /** Keys being processed (a worker carrying a group counts each of its keys). */
  get inFlight(): number {
    return this.#processing.size;
  }
  /** Workers busy, at most `concurrency` (a worker carrying a group counts once). */
  get busyWorkers(): number {
    return this.#active;
  }
  get delayed(): number {
    return this.#timers.size;
  }
  /** Milliseconds its keys waited for a router call slot (fair-scheduler.ts), over its life: 0 without one. */
  slotWaitMs(): number {
    return this.#slots?.throttledMs() ?? 0;
  }
  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
  /** Whether the key is waiting or being processed (a delayed key is neither until its timer fires). */
  holds(key: string): boolean {
    return this.#waiting.has(key) || this.#processing.has(key);
  }
  add(key: string, payload: T, priority: Priority = 'high'): void {
    if (this.#stopped) return;
    this.#options.onAdd?.();
    if (this.#processing.has(key)) {
      // Run again once the current call ends, with what changed meanwhile.
      const dirty = this.#dirty.get(key);
      if (dirty) this.#coalesce(dirty, payload, priority);
      else this.#dirty.set(key, { key, payload, priority, enqueuedAt: this.#now() });
      return;
    }
    const waiting = this.#waiting.get(key);
    if (waiting) {
      this.#coalesce(waiting, payload, priority);
      return;
    }
    this.#waiting.set(key, { key, payload, priority, enqueuedAt: this.#now() });
    (priority === 'high' ? this.#high : this.#low).add(key);
    this.#pump();
  }

  /** Adds the key after `delayMs`; an earlier pending timer for the key wins over a later one. */
  addAfter(key: string, payload: T, delayMs: number, retry = false): void {
    if (this.#stopped) return;
    if (delayMs <= 0) {
      this.add(key, payload);
      return;
    }
    this.#options.onDelayedAdd?.();
    const due = this.#now() + delayMs;
    const existing = this.#timers.get(key);
    // A retry that wins over a plain delayed add (or loses to none) remembers it, for forget() to arm again.
    const plain = existing && !existing.retry ? { due: existing.due, payload: existing.payload } : existing?.shadowed;
    if (existing && existing.due <= due) {
      if (existing.retry && !retry && (existing.shadowed === undefined || due < existing.shadowed.due)) existing.shadowed = { due, payload };
      return;
    }
    if (existing) clearTimeout(existing.handle);
    this.#armTimer(key, payload, due, retry ? { retry, ...(plain ? { shadowed: plain } : {}) } : {});
  }

  /**
   * Node fires a timer longer than 2^31-1 ms after 1 ms (TimeoutOverflowWarning): an At due in years would
   * hot-loop. Long delays are therefore waited out in chunks, re-armed until the due time.
   */
  #armTimer(key: string, payload: T, due: number, kind: Pick<Timer<T>, 'retry' | 'shadowed'> = {}): void {
    const handle = setTimeout(() => {
      if (this.#now() < due) {
        this.#armTimer(key, payload, due, kind);
        return;
      }
      this.#timers.delete(key);
      this.add(key, payload);
    }, Math.min(Math.max(due - this.#now(), 1), MAX_TIMER_MS));
    handle.unref?.();
    this.#timers.set(key, { due, payload, handle, ...kind });
  }

  /** Adds the key after its next backoff delay and returns that delay. */
  addRateLimited(key: string, payload: T): number {
    const failures = (this.#failures.get(key) ?? 0) + 1;
    this.#failures.set(key, failures);
    const delay = backoffDelay(this.#options.backoff ?? DEFAULT_QUEUE_BACKOFF, failures);
    this.addAfter(key, payload, delay, true);
    return delay;
  }

  /**
   * Resets the key's backoff after a success, and cancels a retry still pending from an earlier failure (a
   * conflict's): run after the success, it would find a cache still behind the write that succeeded and call
   * the function for nothing. A requeue-after the retry stood in for is armed again.
   */
  forget(key: string): void {
    this.#failures.delete(key);
    const timer = this.#timers.get(key);
    if (!timer?.retry) return;
    clearTimeout(timer.handle);
    this.#timers.delete(key);
    if (timer.shadowed) this.#armTimer(key, timer.shadowed.payload, timer.shadowed.due);
  }

  /** Drops everything known about a key (its object is gone). */
  remove(key: string): void {
    this.#failures.delete(key);
    const timer = this.#timers.get(key);
    if (timer) clearTimeout(timer.handle);
    this.#timers.delete(key);
    if (this.#waiting.delete(key)) {
      this.#high.delete(key);
      this.#low.delete(key);
    }
    this.#dirty.delete(key);
  }

  /** Resolves when nothing waits or runs (delayed keys do not count). */
  idle(): Promise<void> {
    if (this.#active === 0 && this.#waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops taking work and waits for in-flight calls to finish. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    this.#slots?.unregister();
    for (const timer of this.#timers.values()) clearTimeout(timer.handle);
    this.#timers.clear();
    this.#waiting.clear();
    this.#high.clear();
    this.#low.clear();
    this.#dirty.clear();
    await this.idle();
  }

  #coalesce(item: QueueItem<T>, payload: T, priority: Priority): void {
    item.payload = this.#options.merge ? this.#options.merge(item.payload, payload) : payload;
    if (priority === 'high' && item.priority === 'low') {
      item.priority = 'high';
      if (this.#low.delete(item.key)) this.#high.add(item.key);
    }
  }

  #next(): QueueItem<T> | undefined {
    for (const set of [this.#high, this.#low]) {
      for (const key of set) {
        set.delete(key);
        const item = this.#waiting.get(key);
        this.#waiting.delete(key);
        if (item) return item;
      }
    }
    return undefined;
  }

  #pump(): void {
    if (this.#slots) {
      // The scheduler calls #startNext for each slot it grants this queue.
      if (this.#canStart()) this.#slots.ready();
    } else {
      while (this.#startNext());
    }
    if (this.#active === 0 && this.#waiting.size === 0) {
      for (const resolve of this.#idleWaiters.splice(0)) resolve();
    }
  }

  #canStart(): boolean {
    return !this.#stopped && this.#active < this.#concurrency && this.#waiting.size > 0;
  }

  /** Starts the next waiting key if the queue may; false when it has none or is at its concurrency. */
  #startNext(): boolean {
    if (this.#stopped || this.#active >= this.#concurrency) return false;
    const item = this.#next();
    if (!item) return false;
    const group = [item];
    const companions = companionsFor(this.#waiting.size, this.#concurrency, this.#active, this.#options.groupMax ?? 1);
    for (let i = 0; i < companions; i++) {
      const next = this.#next();
      if (!next) break;
      group.push(next);
    }
    this.#run(group);
    return true;
  }

  /** Whether the caller settled a dirty add; a caller that throws is reported and the key runs again as usual. */
  #settledDirty(key: string, payload: T): boolean {
    try {
      return this.#options.settleDirty?.(key, payload) ?? false;
    } catch (error) {
      this.#options.onError?.(key, error);
      return false;
    }
  }

  /** One worker for the group: each key runs and settles (dirty adds) on its own; the worker is free once all have. */
  #run(group: QueueItem<T>[]): void {
    this.#active += 1;
    const share = group.length > 1 ? new WorkerTurns(group.length) : ALONE;
    const worker = { running: group.length };
    for (const item of group) this.#processing.add(item.key);
    for (const item of group) void this.#runKey(item, share, worker);
  }

  async #runKey(item: QueueItem<T>, share: WorkerShare, worker: { running: number }): Promise<void> {
    try {
      await this.#options.process(item, share);
    } catch (error) {
      this.#options.onError?.(item.key, error);
    } finally {
      const lastOfWorker = --worker.running === 0;
      if (lastOfWorker) this.#active -= 1;
      this.#processing.delete(item.key);
      const dirty = this.#dirty.get(item.key);
      if (dirty && !this.#stopped) {
        this.#dirty.delete(item.key);
        if (!this.#settledDirty(item.key, dirty.payload)) {
          this.#waiting.set(item.key, dirty);
          (dirty.priority === 'high' ? this.#high : this.#low).add(item.key);
        }
      }
      if (lastOfWorker) {
        this.#slots?.done();
        this.#pump();
      } else if (this.#waiting.has(item.key)) {
        // Back in the queue while its worker still carries others: another worker may take it now.
        this.#pump();
      }
    }
  }
}
