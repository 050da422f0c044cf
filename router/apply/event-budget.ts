// How many Kubernetes events the router writes, shared out by tenant: one bucket per tenant whose rate and
// burst are its weight's share (the fair scheduler's weights) of a router-wide rate, among the tenants that
// asked lately. A tenant alone gets all of it; a flooding tenant empties its own bucket, never another's.
// Pure apart from the clock, which is a parameter.

/** The budget of one kind of event (a function's `event` actions, or the router's own warnings). */
export interface EventRate {
  /** Events per second over all tenants. */
  qps: number;
  /** What all tenants may write at once. */
  burst: number;
}

/**
 * Function events: twice the old single bucket (5/s, burst 25), so two busy tenants each keep what one had
 * alone. The router's own warnings (InvalidSpec, Forbidden, ActionRefused, ...) get a budget of their own.
 */
export const DEFAULT_FUNCTION_EVENT_RATE: EventRate = { qps: 10, burst: 50 };
export const DEFAULT_ROUTER_EVENT_RATE: EventRate = { qps: 10, burst: 50 };

/** A tenant that asked for no event this long no longer takes a share. */
const ACTIVE_WINDOW_MS = 60_000;

interface TenantBucket {
  tokens: number;
  /** When the tokens were last counted. */
  refilled: number;
  /** When the tenant last asked: it shares the rate while this is within the window. */
  asked: number;
}

/** Pure: a tenant's share of the rate, its weight over the weights of the tenants asking lately (itself included). */
export function tenantShare(weight: number, activeWeights: number): number {
  const own = weight > 0 && Number.isFinite(weight) ? weight : 1;
  return activeWeights > 0 ? Math.min(1, own / activeWeights) : 1;
}

export class TenantEventBuckets {
  readonly #rate: EventRate;
  readonly #weightOf: (tenant: string) => number;
  readonly #now: () => number;
  readonly #tenants = new Map<string, TenantBucket>();

  constructor(rate: EventRate, weightOf: (tenant: string) => number, now: () => number = () => performance.now()) {
    this.#rate = rate;
    this.#weightOf = weightOf;
    this.#now = now;
  }

  /** Takes a token from the tenant's bucket; false when it has none (the event is dropped). */
  tryTake(tenant: string): boolean {
    const now = this.#now();
    let weights = 0;
    for (const [name, bucket] of this.#tenants) {
      if (name !== tenant && now - bucket.asked > ACTIVE_WINDOW_MS) this.#tenants.delete(name);
      else if (name !== tenant) weights += this.#weightOf(name);
    }
    weights += this.#weightOf(tenant);
    const share = tenantShare(this.#weightOf(tenant), weights);
    const cap = Math.max(1, this.#rate.burst * share);
    // A new tenant starts with its share of the burst, as the one bucket started full.
    const bucket = this.#tenants.get(tenant) ?? { tokens: cap, refilled: now, asked: now };
    bucket.tokens = Math.min(cap, bucket.tokens + ((now - bucket.refilled) / 1000) * this.#rate.qps * share);
    bucket.refilled = now;
    bucket.asked = now;
    this.#tenants.set(tenant, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Tenants holding a bucket (bounded: idle ones are forgotten). */
  get tenants(): number {
    return this.#tenants.size;
  }
}
