// One router replica as a member of a shard group: renews its own Lease, lists the others, moves its share
// of keys through the handover rules (handover.ts), and tells the Loop runners which keys they may start.
import type { V1Lease, V1LeaseList } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../../lib/kube/backoff.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { canAcknowledge, canAdopt, gained, mayStart, NO_SHARE, type HandoverState, type LoopKey } from './handover.ts';
import { LivenessTracker } from './liveness.ts';
import { leaseRecord, memberLeaseName, microTime, SHARD_ACK_LABEL, SHARD_GROUP_LABEL, SHARD_KEYS_LABEL, SHARD_MEMBERS_LABEL, SHARD_VIEW_LABEL } from './member-lease.ts';
import { MemberSet } from './member-set.ts';
import type { ShardMetrics } from './shard-metrics.ts';

/** What a Loop runner asks of its shard: which keys to queue and start, and which it has just gained. */
export interface ShardGate {
  /** Whether this member may start the key now; events of other keys are not worth queueing. */
  owns(loop: string, key: string): boolean;
  /** Marks the key in flight if it may start now and returns its release; undefined if it may not. */
  begin(loop: string, key: string): (() => void) | undefined;
  /** Subscribes a Loop to the keys it gains (to queue from its cache); the listener returns how many it queued. */
  onGained(loop: string, listener: (gained: (loop: string, key: string) => boolean) => number): () => void;
}

export interface ShardMemberOptions {
  /** A client of its own, with its own limiter: a busy router must never miss a renewal. */
  client: KubeClient;
  namespace: string;
  /** Members of a group share keys; the router's --lease-name. */
  group: string;
  identity: string;
  leaseDurationMs?: number;
  /** A member that could not renew for this long starts nothing more (must be < leaseDuration). */
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger;
  metrics: ShardMetrics;
  /** Counts the primaries this member owns under a view, per Loop (status label and metric). */
  countOwned?: (owns: (loop: string, key: string) => boolean) => Map<string, number>;
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
  readonly #leaseName: string;
  readonly #tracker: LivenessTracker;
  readonly #inFlight = new Map<string, LoopKey & { count: number }>();
  readonly #listeners = new Map<(gained: (loop: string, key: string) => boolean) => number, string>();
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

  constructor(options: ShardMemberOptions) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    if (this.#o.renewDeadlineMs >= this.#o.leaseDurationMs) throw new Error('sharding: renewDeadline must be shorter than leaseDuration');
    this.#leaseName = memberLeaseName(options.group, options.identity);
    this.#tracker = new LivenessTracker(this.#o.leaseDurationMs);
  }

  get identity(): string {
    return this.#o.identity;
  }

  status(): ShardStatus {
    const { adopted, target } = this.#state;
    return { identity: this.#o.identity, adopted: adopted.members, target: target.members, acknowledged: this.#ack, fenced: this.#fenced() };
  }

  /** The member the adopted view assigns the key to; undefined before this member adopted a view. */
  ownerOf(loop: string, key: string): string | undefined {
    return this.#state.adopted.size > 0 ? this.#state.adopted.owner(loop, key) : undefined;
  }

  owns(loop: string, key: string): boolean {
    const may = mayStart(this.#state, this.#o.identity, loop, key);
    if (!may && this.#fence?.view.owner(loop, key) === this.#o.identity) this.#fence.missed.add(`${loop}\u0000${key}`);
    return may;
  }

  begin(loop: string, key: string): (() => void) | undefined {
    if (!this.owns(loop, key)) return undefined;
    const id = `${loop}\u0000${key}`;
    const entry = this.#inFlight.get(id);
    if (entry) entry.count += 1;
    else this.#inFlight.set(id, { loop, key, count: 1 });
    return () => {
      const current = this.#inFlight.get(id);
      if (current && --current.count === 0) this.#inFlight.delete(id);
      // The last call of a key being given away: acknowledge now rather than on the next round.
      if (this.#ack !== this.#state.target.id) this.#wake?.();
    };
  }

  onGained(loop: string, listener: (gained: (loop: string, key: string) => boolean) => number): () => void {
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
    if (this.#ack !== target.id && canAcknowledge(this.#state, me, this.#inFlight.values())) {
      this.#ack = target.id;
      await this.#renew();
    }
    if (this.#ack !== undefined) acks.set(me, this.#ack);
    this.#o.metrics.fenced.set(0);
    if (this.#state.adopted.id !== target.id && canAdopt(target, me, acks)) {
      // Back in the view it held before a fence: only the keys it refused meanwhile need a call. Any other
      // member that took them in between saw the same events, and this member refused those too.
      const fence = this.#fence;
      this.#fence = undefined;
      const onlyMissed = fence?.view.id === target.id ? (loop: string, key: string) => fence.missed.has(`${loop}\u0000${key}`) : undefined;
      this.#setState({ adopted: target, target }, onlyMissed);
      this.#o.metrics.handovers.inc();
      this.#o.logger.info({ identity: me, members: target.members, view: target.id, keys: this.#keysOwned }, 'shard view adopted');
      await this.#renew();
    }
  }

  /** Moves to a new state and hands each Loop the keys it may start now and could not before. */
  #setState(next: HandoverState, only?: (loop: string, key: string) => boolean): void {
    const before = this.#state;
    this.#state = next;
    const me = this.#o.identity;
    const all = gained(before, next, me);
    const gainedKey = only ? (loop: string, key: string) => only(loop, key) && all(loop, key) : all;
    for (const [listener, loop] of this.#listeners) {
      const queued = listener(gainedKey);
      if (queued > 0) this.#o.metrics.keysGained.inc({ loop }, queued);
    }
    if (before.adopted !== next.adopted) this.#count();
  }

  #count(): void {
    const owned = this.#o.countOwned?.((loop, key) => this.#state.adopted.owner(loop, key) === this.#o.identity) ?? new Map<string, number>();
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
    const labels = {
      [SHARD_GROUP_LABEL]: this.#o.group,
      [SHARD_VIEW_LABEL]: this.#state.adopted.id,
      [SHARD_MEMBERS_LABEL]: String(this.#state.adopted.size),
      [SHARD_KEYS_LABEL]: String(this.#keysOwned),
      ...(this.#ack ? { [SHARD_ACK_LABEL]: this.#ack } : {}),
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
