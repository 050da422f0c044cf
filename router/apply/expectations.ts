// Expectations: after a function creates or deletes children, its owner is not reconciled again until the
// watch cache shows those creates and deletes (or a timeout passes), so a lagging cache never makes a
// PodSet create too many pods. Checked against the cache itself, so an event seen before the
// expectation was recorded cannot be missed.

export interface ChildRef {
  /** kindKey, e.g. "Pod.v1". */
  kind: string;
  /** "namespace/name". */
  key: string;
  /** For deletes: the uid deleted (a new object of the same name does not count as still there). */
  uid?: string;
}

interface Pending {
  creates: ChildRef[];
  deletes: ChildRef[];
  deadline: number;
}

/** Answers whether the cache holds a child (and its uid) right now. */
export type CacheLookup = (kind: string, key: string) => { uid?: string } | undefined;

/** How long an owner waits for the watch to show its creates and deletes when not told (--expectations-timeout-seconds). */
export const DEFAULT_EXPECTATIONS_TIMEOUT_MS = 5 * 60_000;

export class Expectations {
  readonly #pending = new Map<string, Pending>();
  constructor(
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  expectCreate(owner: string, child: ChildRef): void {
    this.#entry(owner).creates.push(child);
  }

  expectDelete(owner: string, child: ChildRef): void {
    this.#entry(owner).deletes.push(child);
  }

  /** True when nothing is pending for the owner, everything expected is visible, or the timeout passed. */
  satisfied(owner: string, lookup: CacheLookup): boolean {
    const pending = this.#pending.get(owner);
    if (!pending) return true;
    pending.creates = pending.creates.filter((c) => lookup(c.kind, c.key) === undefined);
    pending.deletes = pending.deletes.filter((d) => {
      const cached = lookup(d.kind, d.key);
      return cached !== undefined && (d.uid === undefined || cached.uid === d.uid);
    });
    if ((pending.creates.length === 0 && pending.deletes.length === 0) || this.now() >= pending.deadline) {
      this.#pending.delete(owner);
      return true;
    }
    return false;
  }

  /** Ms until the owner's expectations time out (for a wake-up timer), or undefined if none pend. */
  remainingMs(owner: string): number | undefined {
    const pending = this.#pending.get(owner);
    return pending ? Math.max(0, pending.deadline - this.now()) : undefined;
  }

  forget(owner: string): void {
    this.#pending.delete(owner);
  }

  get size(): number {
    return this.#pending.size;
  }

  #entry(owner: string): Pending {
    let pending = this.#pending.get(owner);
    if (!pending) {
      pending = { creates: [], deletes: [], deadline: 0 };
      this.#pending.set(owner, pending);
    }
    pending.deadline = this.now() + this.timeoutMs;
    return pending;
  }
}
