// One router replica as a member of a shard group: renews its own Lease, lists the others, moves its share
// of keys through the handover rules (handover.ts), and tells the Loop runners which keys they may start.
import type { V1Lease, V1LeaseList } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../../lib/kube/backoff.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { canAcknowledge, canAdopt, gained, mayStart, NO_SHARE, type HandoverState, type LoopKey } from './handover.ts';
import { LivenessTracker } from './liveness.ts';
import { leaseRecord, memberLeaseName, SHARD_ACK_LABEL, SHARD_GROUP_LABEL, SHARD_KEYS_LABEL, SHARD_MEMBERS_LABEL, SHARD_MODE_LABEL, SHARD_VIEW_LABEL } from './member-lease.ts';
import { MemberSet } from './member-set.ts';
import type { ShardMetrics } from './shard-metrics.ts';
import { MemberShare } from './member-share.ts';
import { microTime } from '../../lib/kube/meta-time.ts';

/**
 * What a Loop runner asks of its shard: which keys to queue and start, and which it has just gained. A key
 * belongs to the owner of its slot (the top byte of the API server's shard hash of the primary's uid).
 */
export interface ShardGate {
  /** Whether this member may start the key now; events of other keys are not worth queueing. */
  owns(loop: string, key: string, slot: number): boolean;
  /** Marks the key in flight if it may start now and returns its release; undefined if it may not. */
  begin(loop: string, key: string, slot: number): (() => void) | undefined;
  /** Subscribes a Loop to the slots it gains (to queue from its cache); the listener returns how many keys it queued. */
  onGained(loop: string, listener: (gained: (slot: number, key: string) => boolean) => number): () => void;
  /** The share this member's primary informers ask the API server for; undefined: they receive every primary. */
  readonly share: MemberShare | undefined;
}

export interface ShardMemberOptions {
  /** A client of its own, with its own limiter: a busy router must never miss a renewal. */
  client: KubeClient;
  namespace: string;
  /** Members of a group share keys; the router's --lease-name. */
  group: string;
  identity: string;
  /** Ask the API server for this member's share (default true); false: receive every primary and filter here. */
  serverSide?: boolean;
  leaseDurationMs?: number;
  /** A member that could not renew for this long starts nothing more (must be < leaseDuration). */
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
  metrics: ShardMetrics;
  /** Counts the primaries this member owns under a view, per Loop (status label and metric). */
  countOwned?: (owns: (slot: number) => boolean) => Map<string, number>;
}

const COUNT_EVERY_ROUNDS = 5;

export interface ShardStatus {
  identity: string;
  adopted: readonly string[];
  target: readonly string[];
  acknowledged: string | undefined;
  fenced: boolean;
}

export class ShardMember implements ShardGate {
  readonly #o: Required<Omit<ShardMemberOptions, 'countOwned'>> & Pick<ShardMemberOptions, 'countOwned'>;
  readonly #share = new MemberShare();
  readonly #leaseName: string;
  readonly #tracker: LivenessTracker;
  readonly #inFlight = new Map<string, LoopKey & { count: number }>();
  readonly #listeners = new Map<(gained: (slot: number, key: string) => boolean) => number, string>();
  readonly #abort = new AbortController();
  #state: HandoverState = NO_SHARE;
  /** While fenced: the view adopted before, and the keys of it refused meanwhile (events this member missed). */
  #fence: { view: MemberSet; missed: Set<string> } | undefined;
  #ack: string | undefined;
  #lastRenew = Number.NEGATIVE_INFINITY;
  #lease: V1Lease | undefined;
  #keysOwned = 0;
  #rounds = 0;
  #wake: (() => void) | undefined;
  #running: Promise<void> | undefined;
  /** The target of the previous round, until a first view is adopted (see #round); then undefined for good. */
  #previousTarget: string | undefined;
  #adoptedOnce = false;

  constructor(options: ShardMemberOptions) {
    this.#o = { serverSide: true, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    if (this.#o.renewDeadlineMs >= this.#o.leaseDurationMs) throw new Error('sharding: renewDeadline must be shorter than leaseDuration');
    this.#leaseName = memberLeaseName(options.group, options.identity);
    this.#tracker = new LivenessTracker(this.#o.leaseDurationMs);
    // A cache that now holds the target's share may let this member adopt it: go round at once.
    this.#share.onListed = () => this.#wake?.();
  }

  get share(): MemberShare | undefined {
    return this.#o.serverSide ? this.#share : undefined;
  }

  get identity(): string {
    return this.#o.identity;
  }

  status(): ShardStatus {
    const { adopted, target } = this.#state;
    return { identity: this.#o.identity, adopted: adopted.members, target: target.members, acknowledged: this.#ack, fenced: this.#fenced() };
  }

  /** The member the adopted view assigns a slot to; undefined before this member adopted a view. */
  ownerOf(slot: number): string | undefined {
    return this.#state.adopted.size > 0 ? this.#state.adopted.owner(slot) : undefined;
  }

  owns(loop: string, key: string, slot: number): boolean {
    const may = mayStart(this.#state, this.#o.identity, slot);
    if (!may && this.#fence?.view.owner(slot) === this.#o.identity) this.#fence.missed.add(`${loop}\u0000${key}`);
    return may;
  }

  begin(loop: string, key: string, slot: number): (() => void) | undefined {
    if (!this.owns(loop, key, slot)) return undefined;
    const id = `${loop}\u0000${key}`;
    const entry = this.#inFlight.get(id);
    if (entry) entry.count += 1;
    else this.#inFlight.set(id, { loop, key, slot, count: 1 });
    return () => {
      const current = this.#inFlight.get(id);
      if (current && --current.count === 0) this.#inFlight.delete(id);
      // The last call of a key being given away: acknowledge now rather than on the next round.
      if (this.#ack !== this.#state.target.id) this.#wake?.();
    };
  }

  onGained(loop: string, listener: (gained: (slot: number, key: string) => boolean) => number): () => void {
    this.#listeners.set(listener, loop);
    return () => this.#listeners.delete(listener);
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /** Stops and deletes the Lease, so the others take this member's keys at once instead of after expiry. */
  async stop(): Promise<void> {
    this.#abort.abort();
    this.#wake?.();
    await this.#running;
    this.#setState(NO_SHARE);
    await this.#o.client.request({ method: 'DELETE', path: this.#path(this.#leaseName) }).catch((error: unknown) => {
      if (!isApiError(error, 404)) this.#o.logger.warn({ err: (error as Error).message }, 'could not delete the member Lease');
    });
  }

  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        await this.#round();
      } catch (error) {
        this.#o.logger.warn({ err: (error as Error).message }, 'shard round failed');
      }
      if (signal.aborted) return;
      await Promise.race([sleep(this.#o.retryPeriodMs, signal).catch(() => {}), new Promise<void>((resolve) => (this.#wake = resolve))]);
      this.#wake = undefined;
    }
  }

  /** One round: renew, list the members, move towards the live view, acknowledge, adopt. */
  async #round(): Promise<void> {
    const me = this.#o.identity;
    // The share on the Lease follows objects being created and deleted, not only handovers; every fifth
    // round, as counting hashes every cached primary.
    if (this.#state.adopted.size > 0 && ++this.#rounds % COUNT_EVERY_ROUNDS === 0) this.#count();
    await this.#renew().catch((error: unknown) => this.#o.logger.warn({ err: (error as Error).message }, 'could not renew the member Lease'));
    if (this.#fenced()) {
      if (this.#state !== NO_SHARE) this.#o.logger.warn({ identity: me }, 'member Lease not renewed within the deadline; starting nothing until it is');
      if (this.#state.adopted.size > 0 && !this.#fence) this.#fence = { view: this.#state.adopted, missed: new Set() };
      this.#o.metrics.fenced.set(1);
      this.#setState(NO_SHARE);
      this.#ack = undefined;
      return;
    }
    const list = await this.#o.client.request<V1LeaseList>({ path: this.#path(), query: { labelSelector: `${SHARD_GROUP_LABEL}=${this.#o.group}` } });
    const others = list.items.filter((l) => l.metadata?.name !== this.#leaseName).map((l) => leaseRecord(l));
    const { live, acks } = this.#tracker.update(others, performance.now());
    const target = new MemberSet([...live, me]);
    if (target.id !== this.#state.target.id) {
      this.#o.logger.info({ identity: me, members: target.members, view: target.id }, 'shard members changed');
      this.#setState({ adopted: this.#state.adopted, target });
    }
    // The share asked of the API server follows the target, except before a first view: members started
    // together see each other's Leases only from their second round, and a first share of one member would
    // list the whole collection (and keep its peak memory) only to list again. Before a first adoption the
    // share waits for a target two rounds agree on: one retry period more at start.
    const settled = this.#adoptedOnce || this.#previousTarget === target.id;
    this.#previousTarget = this.#adoptedOnce ? undefined : target.id;
    if (settled && target.has(me)) this.#share.set(target.slotsOf(me), target.id);
    if (this.#ack !== target.id && canAcknowledge(this.#state, me, this.#inFlight.values())) {
      this.#ack = target.id;
      await this.#renew();
    }
    if (this.#ack !== undefined) acks.set(me, this.#ack);
    this.#o.metrics.fenced.set(0);
    // Adopting starts the gained keys from the cache: the sharded caches must hold the target's share first.
    if (this.#state.adopted.id !== target.id && canAdopt(target, me, acks) && this.#share.covers(target.id)) {
      // Back in the view it held before a fence: only the keys it refused meanwhile need a call. Any other
      // member that took them in between saw the same events, and this member refused those too.
      const fence = this.#fence;
      this.#fence = undefined;
      const onlyMissed = fence?.view.id === target.id ? fence.missed : undefined;
      this.#setState({ adopted: target, target }, onlyMissed);
      this.#adoptedOnce = true;
      this.#o.metrics.handovers.inc();
      this.#o.logger.info({ identity: me, members: target.members, view: target.id, keys: this.#keysOwned }, 'shard view adopted');
      await this.#renew();
    }
  }

  /**
   * Moves to a new state and hands each Loop the slots it may start now and could not before (with `only`,
   * just the keys refused while fenced: `<loop>\0<key>`).
   */
  #setState(next: HandoverState, only?: ReadonlySet<string>): void {
    const before = this.#state;
    this.#state = next;
    const me = this.#o.identity;
    const gainedSlot = gained(before, next, me);
    for (const [listener, loop] of this.#listeners) {
      const queued = listener(only ? (slot, key) => gainedSlot(slot) && only.has(`${loop}\u0000${key}`) : gainedSlot);
      if (queued > 0) this.#o.metrics.keysGained.inc({ loop }, queued);
    }
    if (before.adopted !== next.adopted) this.#count();
  }

  #count(): void {
    const owned = this.#o.countOwned?.((slot) => this.#state.adopted.owner(slot) === this.#o.identity) ?? new Map<string, number>();
    this.#o.metrics.keysOwned.reset();
    for (const [loop, n] of owned) this.#o.metrics.keysOwned.set({ loop }, n);
    this.#keysOwned = [...owned.values()].reduce((a, n) => a + n, 0);
    this.#o.metrics.members.set(this.#state.adopted.size);
  }

  #fenced(): boolean {
    return performance.now() - this.#lastRenew > this.#o.renewDeadlineMs;
  }

  #path(name?: string): string {
    const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases`;
    return name ? `${base}/${encodeURIComponent(name)}` : base;
  }

  /** Writes the member Lease: a renewal, and the labels that show this member's view and share. */
  async #renew(): Promise<void> {
    const started = performance.now();
    const mode = this.#o.serverSide ? this.#share.mode() : 'client';
    if (mode !== 'unknown') this.#o.metrics.serverSide.set(mode === 'server' ? 1 : 0);
    const labels = {
      [SHARD_GROUP_LABEL]: this.#o.group,
      [SHARD_VIEW_LABEL]: this.#state.adopted.id,
      [SHARD_MEMBERS_LABEL]: String(this.#state.adopted.size),
      [SHARD_KEYS_LABEL]: String(this.#keysOwned),
      ...(this.#ack ? { [SHARD_ACK_LABEL]: this.#ack } : {}),
      ...(mode === 'unknown' ? {} : { [SHARD_MODE_LABEL]: mode }),
    };
    const spec = { holderIdentity: this.#o.identity, leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000), renewTime: microTime(new Date()) };
    // A slow renewal that succeeds is still a renewal: only the renew deadline bounds it.
    const timeoutMs = this.#o.renewDeadlineMs;
    const put = (lease: V1Lease) =>
      this.#o.client.request<V1Lease>({ method: 'PUT', path: this.#path(this.#leaseName), timeoutMs, body: { ...lease, metadata: { ...lease.metadata, labels }, spec: { ...lease.spec, ...spec } } });
    try {
      this.#lease = await put(this.#lease ?? (await this.#createOrRead(labels, spec, timeoutMs)));
    } catch (error) {
      if (!isApiError(error, 409) && !isApiError(error, 404)) throw error;
      // Most often our own earlier write that timed out on the client but went through: read and write again.
      this.#lease = undefined;
      this.#lease = await put(await this.#createOrRead(labels, spec, timeoutMs));
    }
    this.#lastRenew = started;
  }

  async #createOrRead(labels: Record<string, string>, spec: Record<string, unknown>, timeoutMs: number): Promise<V1Lease> {
    try {
      return await this.#o.client.request<V1Lease>({ path: this.#path(this.#leaseName), timeoutMs });
    } catch (error) {
      if (!isApiError(error, 404)) throw error;
      return this.#o.client.request<V1Lease>({
        method: 'POST',
        path: this.#path(),
        timeoutMs,
        body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: this.#leaseName, namespace: this.#o.namespace, labels }, spec },
      });
    }
  }
}
