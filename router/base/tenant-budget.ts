// The API budget every Loop's requests (as its ServiceAccount) share: one token bucket for the router,
// handed out by weighted fair queueing across tenants when requests wait, at once when none do
// (work-conserving: a lone Loop gets the whole budget). docs/router.md#fairness-across-tenants.
import { startWaiting, stopWaiting, waitedMs, type WaitClock } from './wait-clock.ts';
import { TokenBucket, type RateLimit, type RequestLimiter } from '../../lib/kube/rate-limiter.ts';

export interface TenantBudgetOptions {
  /** What all Loops may ask of the API server together; qps 0 or Infinity disables it. */
  limit: RateLimit;
  weightOf: (tenant: string) => number;
  now?: () => number;
  /** Told of every request that had to wait for a token (kubeloop_loop_api_wait_seconds). */
  onWait?: (tenant: string, loop: string, seconds: number) => void;
}

interface Waiter {
  loop: string;
  since: number;
  resolve: () => void;
}

interface TenantQueue extends WaitClock {
  name: string;
  waiters: Waiter[];
  finishTag: number;
  /** Limiters handed out and not closed: the tenant is forgotten with its last. */
  users: number;
}

/** A tenant's use of the budget (metrics, the Throttled condition). */
export interface TenantBudgetShare {
  tenant: string;
  waiting: number;
  /** Milliseconds the tenant had requests waiting for a token, over its life (a counter). */
  throttledMs: number;
}

/** One Loop's view of the budget: a limiter for its client, closed when the Loop stops. */
export interface LoopBudget extends RequestLimiter {
  /** Milliseconds the Loop had a request waiting (its own cap or its tenant's share), over its life (a counter). */
  throttledMs(): number;
  close(): void;
}

export class TenantBudget {
  readonly #limit: RateLimit;
  readonly #weightOf: (tenant: string) => number;
  readonly #now: () => number;
  readonly #onWait: TenantBudgetOptions['onWait'];
  readonly #tenants = new Map<string, TenantQueue>();
  readonly #asking = new Set<TenantQueue>();
  #tokens: number;
  #last: number;
  #virtualNow = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: TenantBudgetOptions) {
    this.#limit = options.limit;
    this.#weightOf = options.weightOf;
    this.#now = options.now ?? (() => performance.now());
    this.#onWait = options.onWait;
    this.#tokens = options.limit.burst;
    this.#last = this.#now();
  }

  get qps(): number {
    return this.#limit.qps;
  }

  get unlimited(): boolean {
    return !(this.#limit.qps > 0) || this.#limit.qps === Infinity;
  }

  /** The limiter a Loop's client takes a token from before each request; a per-Loop cap is taken first. */
  forLoop(tenant: string, loop: string, perLoop?: RateLimit): LoopBudget {
    const queue = this.#tenant(tenant);
    queue.users += 1;
    const own = perLoop && perLoop.qps > 0 ? new TokenBucket(perLoop, this.#now) : undefined;
    let closed = false;
    // Wall time with at least one request waiting: what the Loop's Throttled condition measures.
    let pending = 0;
    let since = 0;
    let throttled = 0;
    return {
      take: async () => {
        if (pending === 0) since = this.#now();
        pending += 1;
        try {
          await own?.take();
          await this.#take(queue, loop);
        } finally {
          pending -= 1;
          if (pending === 0) throttled += this.#now() - since;
        }
      },
      throttledMs: () => throttled + (pending > 0 ? this.#now() - since : 0),
      close: () => {
        if (closed) return;
        closed = true;
        queue.users -= 1;
        if (queue.users === 0 && queue.waiters.length === 0) this.#tenants.delete(tenant);
      },
    };
  }

  shares(): TenantBudgetShare[] {
    const now = this.#now();
    return [...this.#tenants.values()].map((t) => ({
      tenant: t.name,
      waiting: t.waiters.length,
      throttledMs: waitedMs(t, now),
    }));
  }

  #tenant(name: string): TenantQueue {
    let queue = this.#tenants.get(name);
    if (!queue) {
      queue = { name, waiters: [], finishTag: 0, waitingSince: undefined, throttledMs: 0, users: 0 };
      this.#tenants.set(name, queue);
    }
    return queue;
  }

  #take(queue: TenantQueue, loop: string): Promise<void> {
    if (this.unlimited) return Promise.resolve();
    this.#refill();
    // Nobody waits and a token is there: no queueing, no bookkeeping beyond the tag.
    if (this.#asking.size === 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      this.#charge(queue);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const now = this.#now();
      queue.waiters.push({ loop, since: now, resolve });
      if (!this.#asking.has(queue)) {
        this.#asking.add(queue);
        startWaiting(queue, now);
      }
      this.#schedule();
    });
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.#limit.burst, this.#tokens + ((now - this.#last) / 1000) * this.#limit.qps);
    this.#last = now;
  }

  #charge(queue: TenantQueue): void {
    const start = Math.max(queue.finishTag, this.#virtualNow);
    const weight = this.#weightOf(queue.name);
    queue.finishTag = start + 1 / (weight > 0 && Number.isFinite(weight) ? weight : 1);
    this.#virtualNow = start;
  }

  /** The waiting tenant whose next request starts earliest in virtual time (weighted fair queueing). */
  #pick(): TenantQueue | undefined {
    let best: TenantQueue | undefined;
    let bestTag = Infinity;
    for (const queue of this.#asking) {
      const tag = Math.max(queue.finishTag, this.#virtualNow);
      if (tag < bestTag) {
        best = queue;
        bestTag = tag;
      }
    }
    return best;
  }

  #release(): void {
    this.#refill();
    const now = this.#now();
    while (this.#tokens >= 1) {
      const queue = this.#pick();
      if (!queue) break;
      const waiter = queue.waiters.shift()!;
      this.#tokens -= 1;
      this.#charge(queue);
      if (queue.waiters.length === 0) {
        this.#asking.delete(queue);
        stopWaiting(queue, now);
        if (queue.users === 0) this.#tenants.delete(queue.name);
      }
      this.#onWait?.(queue.name, waiter.loop, (now - waiter.since) / 1000);
      waiter.resolve();
    }
  }

  #schedule(): void {
    if (this.#timer) return;
    const wait = Math.max(1, Math.ceil(((1 - this.#tokens) / this.#limit.qps) * 1000));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#release();
      if (this.#asking.size > 0) this.#schedule();
    }, wait);
  }
}
