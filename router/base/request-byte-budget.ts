// The bytes of requests the router has in flight to functions (sent or being sent, their reply awaited),
// bounded for every Loop together and divided by tenant weight: a tenant over its share waits for its own
// calls to end, it does not take another tenant's share. docs/security.md, tenant bounds.

/** Four maximal requests (--max-related-bytes-per-request) at once, far below the router's 256 Mi limit. */
export const DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT = 32 * 1024 * 1024;

interface Waiter {
  bytes: number;
  resolve: (release: () => void) => void;
}

interface TenantState {
  inFlight: number;
  waiters: Waiter[];
}

/** What a tenant may have in flight now: its weight's part of the capacity among the tenants using it. */
export function tenantShare(capacity: number, weight: number, activeWeights: number): number {
  return activeWeights > 0 ? (capacity * weight) / activeWeights : capacity;
}

/**
 * Whether a request of `bytes` may start: within its tenant's share and the whole capacity; a request larger
 * than its tenant's whole share goes alone (nothing else of the tenant in flight) when the capacity has room.
 */
export function mayStart(bytes: number, tenantInFlight: number, share: number, total: number, capacity: number): boolean {
  if (total + bytes > capacity) return false;
  if (tenantInFlight + bytes <= share) return true;
  return bytes > share && tenantInFlight === 0;
}

export class RequestByteBudget {
  readonly #tenants = new Map<string, TenantState>();
  #total = 0;

  constructor(
    readonly capacity: number,
    private readonly weightOf: (tenant: string) => number = () => 1,
    /** Told of every change of a tenant's bytes in flight (+ when a request starts, - when it ends). */
    private readonly onChange?: (tenant: string, delta: number) => void,
  ) {}

  get inFlight(): number {
    return this.#total;
  }

  tenantInFlight(tenant: string): number {
    return this.#tenants.get(tenant)?.inFlight ?? 0;
  }

  /**
   * Resolves with the release of `bytes` once they fit (callers check budgetProblem first: a request over the
   * whole capacity would wait for ever). Waiters of a tenant start in order.
   */
  acquire(tenant: string, bytes: number): Promise<() => void> {
    const state = this.#tenant(tenant);
    return new Promise((resolve) => {
      state.waiters.push({ bytes, resolve });
      this.#pump();
    });
  }

  #tenant(name: string): TenantState {
    let state = this.#tenants.get(name);
    if (!state) {
      state = { inFlight: 0, waiters: [] };
      this.#tenants.set(name, state);
    }
    return state;
  }

  #activeWeights(): number {
    let sum = 0;
    for (const name of this.#tenants.keys()) sum += this.weightOf(name);
    return sum;
  }

  /** Starts every waiter that fits, tenant by tenant, each tenant's in order. */
  #pump(): void {
    let started = true;
    while (started) {
      started = false;
      const weights = this.#activeWeights();
      for (const [name, state] of this.#tenants) {
        const head = state.waiters[0];
        if (!head) continue;
        const share = tenantShare(this.capacity, this.weightOf(name), weights);
        if (!mayStart(head.bytes, state.inFlight, share, this.#total, this.capacity)) continue;
        state.waiters.shift();
        state.inFlight += head.bytes;
        this.#total += head.bytes;
        this.onChange?.(name, head.bytes);
        head.resolve(this.#release(name, state, head.bytes));
        started = true;
      }
    }
  }

  #release(name: string, state: TenantState, bytes: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      state.inFlight -= bytes;
      this.#total -= bytes;
      this.onChange?.(name, -bytes);
      // A tenant with nothing in flight or waiting no longer counts in the others' shares.
      if (state.inFlight === 0 && state.waiters.length === 0) this.#tenants.delete(name);
      this.#pump();
    };
  }
}
