// A worker that carries a group of keys (work-queue.ts, groupMax): its keys run together, each still alone
// on its key, but what must stay one at a time per worker (the API writes) takes turns here, in arrival order.

/** What a key's run shares with the other keys its worker carries. */
export interface WorkerShare {
  /** Keys the worker carries, this one included; 1: alone, as without groups. */
  readonly keys: number;
  /** Runs `write` in this key's turn, and hands the turn on when it settles. */
  inTurn<R>(write: () => Promise<R>): Promise<R>;
}

/** A worker carrying one key: its turn is always now, without a microtask to wait for it. */
export const ALONE: WorkerShare = { keys: 1, inTurn: (write) => write() };

/** Turns, first come first served; a release called twice hands the turn on once. */
export class WorkerTurns implements WorkerShare {
  #tail: Promise<void> = Promise.resolve();

  constructor(readonly keys: number) {}

  async inTurn<R>(write: () => Promise<R>): Promise<R> {
    const release = await this.turn();
    try {
      return await write();
    } finally {
      release();
    }
  }

  /** Resolves when it is the caller's turn, with the release that hands the turn to the next key. */
  turn(): Promise<() => void> {
    let handOn!: () => void;
    const released = new Promise<void>((resolve) => (handOn = resolve));
    const mine = this.#tail.then(() => handOn);
    this.#tail = this.#tail.then(() => released);
    return mine;
  }
}

/**
 * How many waiting keys join the key a worker starts (pure): none unless a backlog waits (at least as many keys
 * as the queue has workers: fewer are a burst its workers clear in one round), then only keys no free worker
 * could start now, so a group never holds back a key a free worker would run; at most `groupMax` keys in all.
 */
export function companionsFor(waiting: number, concurrency: number, activeWorkers: number, groupMax: number): number {
  if (waiting < concurrency) return 0;
  const freeAfterThis = Math.max(0, concurrency - activeWorkers - 1);
  return Math.max(0, Math.min(groupMax - 1, waiting - freeAfterThis));
}
