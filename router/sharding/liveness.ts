// Which member Leases are live, judged the client-go way: a Lease is expired when this member has seen
// it unchanged for longer than its duration (its own clock), never by comparing clocks across machines.

export interface MemberLeaseRecord {
  /** The Lease name (one per member). */
  name: string;
  /** spec.holderIdentity: the member's identity; empty once released. */
  holder: string;
  /** Changes on every renewal (spec.renewTime, or the resourceVersion). */
  renewal: string;
  durationMs: number;
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
      if (record.holder === '' || unchangedFor > record.durationMs) continue;
      live.push(record.holder);
      if (record.ack !== undefined) acks.set(record.holder, record.ack);
    }
    for (const name of this.#seen.keys()) if (!present.has(name)) this.#seen.delete(name);
    return { live, acks };
  }
}
