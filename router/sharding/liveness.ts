// Which member Leases are live, judged the client-go way: a Lease is expired when this member has seen
// it unchanged for longer than the lease duration (its own clock), never by comparing clocks across machines.
// The duration is this router's own, never a Lease's `leaseDurationSeconds`: anyone who may write a Lease
// could otherwise keep a dead member "live" for years and strand every key it owned.

export interface MemberLeaseRecord {
  /** The Lease name (one per member). */
  name: string;
  /** spec.holderIdentity: the member's identity; empty once released. */
  holder: string;
  /** Changes on every renewal (spec.renewTime, or the resourceVersion). */
  renewal: string;
  /** The view the member acknowledged (its shard-ack label), if any. */
  ack: string | undefined;
}

export interface Membership {
  live: string[];
  /** Acknowledged view per live member. */
  acks: Map<string, string>;
}

export class LivenessTracker {
  readonly #seen = new Map<string, { renewal: string; at: number }>();
  readonly #durationMs: number;

  /** durationMs: this router's own lease duration (every member of a group runs with the same one). */
  constructor(durationMs: number) {
    this.#durationMs = durationMs;
  }

  /** Folds in one listing of the member Leases; `now` is this member's monotonic clock (ms). */
  update(records: readonly MemberLeaseRecord[], now: number): Membership {
    const present = new Set<string>();
    const live: string[] = [];
    const acks = new Map<string, string>();
    for (const record of records) {
      present.add(record.name);
      const seen = this.#seen.get(record.name);
      if (seen?.renewal !== record.renewal) this.#seen.set(record.name, { renewal: record.renewal, at: now });
      const unchangedFor = now - (this.#seen.get(record.name)?.at ?? now);
      if (record.holder === '' || unchangedFor > this.#durationMs) continue;
      live.push(record.holder);
      if (record.ack !== undefined) acks.set(record.holder, record.ack);
    }
    for (const name of this.#seen.keys()) if (!present.has(name)) this.#seen.delete(name);
    return { live, acks };
  }
}
