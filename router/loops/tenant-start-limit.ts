// How often one tenant's Loops may (re)start: a token bucket per tenant (namespace), as client-go's
// workqueue BucketRateLimiter, so one tenant churning Loops cannot spend the router's own API budget
// (access reviews, lists, watches, status writes) that other tenants' Loop starts need. ClusterLoops are not limited.
import type { RateLimit } from '../../lib/kube/rate-limiter.ts';

/** 2 starts a second with 20 at once: a team applying its Loops starts them at once, churn waits its turn. */
export const DEFAULT_TENANT_LOOP_STARTS: RateLimit = { qps: 2, burst: 20 };

/** Tenants whose buckets are kept before the full ones are dropped (a full bucket is the same as none). */
const PRUNE_ABOVE = 1000;

interface Bucket {
  /** Negative when starts are reserved ahead: each waiting Loop holds its place in line. */
  tokens: number;
  at: number;
}

export class TenantStartLimit {
  readonly #buckets = new Map<string, Bucket>();
  /** When each held-back Loop may start: its reserved token, so it is not overtaken by its tenant's later starts. */
  readonly #due = new Map<string, number>();

  constructor(
    readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get unlimited(): boolean {
    return !(this.limit.qps > 0) || this.limit.qps === Infinity;
  }

  /**
   * Takes a start for the Loop `id` of `tenant`: 0 when it may start now, else the ms to wait. The token is
   * reserved at once, so a Loop asked again when its wait is over starts: every Loop starts eventually.
   */
  reserve(tenant: string, id: string): number {
    if (this.unlimited) return 0;
    const now = this.now();
    const due = this.#due.get(id);
    if (due !== undefined) {
      if (due > now) return Math.ceil(due - now);
      this.#due.delete(id);
      return 0;
    }
    const bucket = this.#refill(tenant, now);
    bucket.tokens -= 1;
    if (bucket.tokens >= 0) return 0;
    const wait = Math.ceil((-bucket.tokens / this.limit.qps) * 1000);
    this.#due.set(id, now + wait);
    return wait;
  }

  /** The Loop is gone: its place in line is dropped (its token stays spent: deleting is no way around the limit). */
  forget(id: string): void {
    this.#due.delete(id);
  }

  #refill(tenant: string, now: number): Bucket {
    if (this.#buckets.size > PRUNE_ABOVE) this.#prune(now);
    const bucket = this.#buckets.get(tenant) ?? { tokens: this.limit.burst, at: now };
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.qps);
    bucket.at = now;
    this.#buckets.set(tenant, bucket);
    return bucket;
  }

  #prune(now: number): void {
    for (const [tenant, b] of this.#buckets) if (b.tokens + ((now - b.at) / 1000) * this.limit.qps >= this.limit.burst) this.#buckets.delete(tenant);
  }
}

/** The message of a Loop whose start waits for its tenant's turn; `handover`: its running generation meanwhile. */
export function startThrottledMessage(namespace: string, limit: RateLimit, waitMs: number, handover?: { runningGeneration: number }): string {
  const message =
    `namespace ${namespace} (re)started more Loops than the router starts per namespace (${limit.qps}/s, ${limit.burst} at once: ` +
    `--tenant-loop-starts-qps, --tenant-loop-starts-burst); this one starts in about ${Math.ceil(waitMs / 1000)} s`;
  return handover ? `the Loop's new spec waits: ${message}; generation ${handover.runningGeneration} keeps running until then` : message;
}
