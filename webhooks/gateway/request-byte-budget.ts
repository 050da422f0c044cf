// The gateway-wide budget of request bytes in flight (the reviews it holds and the function requests it
// builds), divided by tenant: each tenant is guaranteed budget / tenants and may borrow only bytes no other
// tenant's guarantee reserves, so one team's burst of large requests never takes another team's share. Pure.

/** Default of --max-in-flight-request-bytes: with the 256 Mi limit, room for the heap these bytes cost when parsed. */
export const DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES = 64 * 1024 * 1024;

export type ByteGrant = { ok: true } | { ok: false; message: string };

export class RequestByteBudget {
  readonly #held = new Map<string, number>();
  #tenants = 1;

  constructor(readonly maxBytes: number) {}

  /** How many tenants share the budget (those with a served hook); at least one. */
  setTenants(count: number): void {
    this.#tenants = Math.max(1, count);
  }

  /** What each tenant is guaranteed. */
  get share(): number {
    return Math.floor(this.maxBytes / this.#tenants);
  }

  held(tenant: string): number {
    return this.#held.get(tenant) ?? 0;
  }

  /**
   * Takes `bytes` for `tenant` when they fit its guaranteed share, or when the other tenants' guarantees (the
   * unused part of each, plus what each holds beyond it) still fit beside them. The invariant kept: the sum
   * over tenants of max(held, share) never exceeds the budget, so a guarantee is always there to take.
   */
  tryAcquire(tenant: string, bytes: number): ByteGrant {
    const share = this.share;
    const mine = this.held(tenant) + bytes;
    let others = 0;
    let othersHolding = 0;
    for (const [other, held] of this.#held) {
      if (other === tenant) continue;
      others += Math.max(held, share);
      othersHolding += 1;
    }
    // Tenants holding nothing still have their share reserved.
    others += Math.max(0, this.#tenants - 1 - othersHolding) * share;
    if (mine > share && mine + others > this.maxBytes) {
      return { ok: false, message: `needs ${bytes} request bytes while it holds ${this.held(tenant)}: over its share of the gateway's in-flight request bytes (${share} of ${this.maxBytes}, --max-in-flight-request-bytes divided by ${this.#tenants} tenants) with no unreserved bytes to borrow` };
    }
    this.#held.set(tenant, mine);
    return { ok: true };
  }

  release(tenant: string, bytes: number): void {
    const left = this.held(tenant) - bytes;
    if (left > 0) this.#held.set(tenant, left);
    else this.#held.delete(tenant);
  }
}
