// Leader election on a coordination.k8s.io/v1 Lease, the client-go way: expiry is judged by how long
// this replica has seen the lease unchanged (its own clock), never by comparing clocks across machines.
import type { V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from '../lib/kube/backoff.ts';
import { isApiError, type KubeClient } from '../lib/kube/kube-client.ts';
import { microTime } from '../lib/kube/meta-time.ts';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  /** The leader gives up if it could not renew for this long (must be < leaseDuration). */
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger?: Logger;
  /** Runs beside the renewals (a slow start must not stop them); may be followed by onStoppedLeading before it ends. */
  onStartedLeading: () => void | Promise<void>;
  /** Called at the renew deadline, whatever a request in flight is doing; must stop what onStartedLeading began. */
  onStoppedLeading: () => void | Promise<void>;
}

/** How long a Lease holds without renewal (leader election and shard members; --lease-duration-seconds). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;

export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectionOptions, 'logger'>> & { logger?: Logger };
  readonly #abort = new AbortController();
  #leading = false;
  #observed: { record: string; at: number } | undefined;
  #running: Promise<void> | undefined;
  /** Fires at the renew deadline unless a renewal re-arms it first. */
  #deadline: NodeJS.Timeout | undefined;
  /** The last term's stop: a new term starts only once the old one's in-flight writes are done. */
  #stopping: Promise<void> = Promise.resolve();

  constructor(options: LeaderElectionOptions) {
    this.#o = { leaseDurationMs: DEFAULT_LEASE_DURATION_MS, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...options };
    if (this.#o.renewDeadlineMs >= this.#o.leaseDurationMs) throw new Error('leader election: renewDeadline must be shorter than leaseDuration');
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** The holder of the Lease as last read (this replica's identity while it leads); undefined when none or expired. */
  get leader(): string | undefined {
    if (this.#leading) return this.#o.identity;
    const observed = this.#observed;
    if (!observed) return undefined;
    const [holder, , seconds] = JSON.parse(observed.record) as [string | undefined, unknown, number | undefined];
    const expired = Date.now() - observed.at > (seconds ?? this.#o.leaseDurationMs / 1000) * 1000;
    return holder && !expired ? holder : undefined;
  }

  start(): void {
    this.#running ??= this.#run();
  }

  /** Stops; a leader releases the lease so a standby takes over at once instead of after expiry. */
  async stop(): Promise<void> {
    this.#abort.abort();
    clearTimeout(this.#deadline);
    await this.#running;
    if (this.#leading) {
      this.#leading = false;
      await this.#release().catch((error: unknown) => this.#o.logger?.warn({ err: (error as Error).message }, 'could not release the lease'));
      await this.#o.onStoppedLeading();
    }
  }

  // Found by the soak: onStartedLeading was awaited here and waited for the Loop cache, which a restarting
  // API server withholds for many seconds; the lease went unrenewed, the standby took over, and both
  // replicas ran the Loops (a PodSet of 9 got 18 pods). Likewise a renewal hanging in a request never
  // reached the deadline check. Now the start runs beside the renewals and a timer enforces the deadline.
  async #run(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      let acquired = false;
      const sentAt = Date.now();
      try {
        acquired = await this.#tryAcquireOrRenew();
      } catch (error) {
        this.#o.logger?.warn({ err: (error as Error).message }, 'lease request failed');
      }
      // The standby counts from when it sees our write, which is after we sent it: counting from the
      // send, we step down first.
      const left = this.#o.renewDeadlineMs - (Date.now() - sentAt);
      if (acquired && left > 0 && !signal.aborted) {
        clearTimeout(this.#deadline);
        this.#deadline = setTimeout(() => this.#stepDown(), left);
        if (!this.#leading) {
          this.#leading = true;
          this.#o.logger?.info({ lease: this.#o.name, identity: this.#o.identity }, 'became leader');
          void this.#startLeading();
        }
      }
      try {
        await sleep(this.#o.retryPeriodMs * (this.#leading ? 1 : 1 + Math.random() * 0.2), signal);
      } catch {
        return;
      }
    }
  }

  async #startLeading(): Promise<void> {
    // Found by the soak too: a leader that stepped down in an etcd pause and won the lease back at once
    // started a new term (fresh caches, no expectations) while the old term's creates were still landing.
    await this.#stopping;
    if (!this.#leading) return;
    try {
      await this.#o.onStartedLeading();
    } catch (error) {
      // Could not start (e.g. the Loop CRD is missing): step down so a healthier replica may lead,
      // and try again on a later round.
      if (!this.#leading) return;
      this.#o.logger?.error({ err: (error as Error).message }, 'could not start as leader; stepping down');
      this.#leading = false;
      clearTimeout(this.#deadline);
      await this.#o.onStoppedLeading();
      await this.#release().catch(() => {});
    }
  }

  #stepDown(): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#o.logger?.warn({ lease: this.#o.name }, 'lost the lease');
    this.#stopping = Promise.resolve(this.#o.onStoppedLeading()).catch((error: unknown) => this.#o.logger?.error({ err: (error as Error).message }, 'stopping after the lease was lost failed'));
  }

  #path(name?: string): string {
    const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases`;
    return name ? `${base}/${encodeURIComponent(name)}` : base;
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const { client, identity, name } = this.#o;
    const now = new Date();
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    let lease: V1Lease;
    try {
      lease = await client.request<V1Lease>({ path: this.#path(name), timeoutMs: this.#o.retryPeriodMs * 2 });
    } catch (error) {
      if (!isApiError(error, 404)) throw error;
      try {
        await client.request({
          method: 'POST',
          path: this.#path(),
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace: this.#o.namespace },
            spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds, acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
          },
        });
        return true;
      } catch (createError) {
        if (isApiError(createError, 409)) return false;
        throw createError;
      }
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseDurationSeconds]);
    if (this.#observed?.record !== record) this.#observed = { record, at: Date.now() };
    const holder = spec.holderIdentity ?? '';
    const duration = (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    const expired = Date.now() - this.#observed.at > duration;
    if (holder !== '' && holder !== identity && !expired) return false;
    const takingOver = holder !== identity;
    try {
      await client.request({
        method: 'PUT',
        path: this.#path(name),
        timeoutMs: this.#o.retryPeriodMs * 2,
        body: {
          ...lease,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            renewTime: microTime(now),
            ...(takingOver ? { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
          },
        },
      });
    } catch (error) {
      // Someone else wrote the lease since we read it (resourceVersion mismatch): they won this round.
      if (isApiError(error, 409)) return false;
      throw error;
    }
    return true;
  }

  async #release(): Promise<void> {
    const lease = await this.#o.client.request<V1Lease>({ path: this.#path(this.#o.name) });
    if (lease.spec?.holderIdentity !== this.#o.identity) return;
    await this.#o.client.request({
      method: 'PUT',
      path: this.#path(this.#o.name),
      body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(new Date()) } },
    });
  }
}
