// The router-wide cap on function calls in flight, shared across tenants by weighted fair queueing: the
// freed slot goes to the waiting tenant holding the smallest share of calls for its weight (ties: start-time
// fair queueing tags), then round robin over that tenant's Loops. Pure: no timers, no I/O; the clock is given.
import { startWaiting, stopWaiting, waitedMs, type WaitClock } from './wait-clock.ts';

/** One Loop's work queue as the scheduler sees it; the queue keeps its own per-key and per-Loop limits. */
export interface Flow {
  readonly tenant: string;
  /** The Loop's identity (`<namespace>/<name>` or `<name>`). */
  readonly id: string;
  /** Starts one call if the queue still has a key it may start; false when it has none (the slot stays free). */
  start(): boolean;
  /** Whether it could start another call now (a key waiting, room under its concurrency). */
  wantsMore(): boolean;
}

export interface FlowHandle {
  /** The queue has a key waiting and room under its own concurrency: it asks for a slot. */
  ready(): void;
  /** A call this flow started ended: its slot is free again. */
  done(): void;
  /** The Loop stopped: its queued requests are dropped (its calls in flight still end with done()). */
  unregister(): void;
  /** Milliseconds it had a key ready but waited for a router slot, over its life (a counter; the Throttled condition). */
  throttledMs(): number;
}

export interface FairSchedulerOptions {
  /** Calls in flight across every Loop of the router; Infinity disables the cap (each Loop keeps its own). */
  capacity: number;
  weightOf: (tenant: string) => number;
  now?: () => number;
  /**
   * Slots kept free for tenants with nothing in flight (one each, at most this fraction of the capacity), so
   * a tenant that wakes up starts a call at once even while a neighbour's calls all hang. 0.1 by default.
   */
  reserveFraction?: number;
}

interface FlowState extends WaitClock {
  flow: Flow;
  inFlight: number;
  queued: boolean;
  registered: boolean;
}

interface TenantState extends WaitClock {
  name: string;
  flows: Set<FlowState>;
  /** Flows asking for a slot, served round robin. */
  ring: FlowState[];
  inFlight: number;
  /** Start-time fair queueing: the virtual time this tenant's next call would finish at. */
  finishTag: number;
  started: number;
}

/** What a tenant got (metrics, the Throttled condition). */
export interface TenantShare {
  tenant: string;
  weight: number;
  inFlight: number;
  /** Loops of the tenant asking for a slot now. */
  waitingLoops: number;
  /** Milliseconds the tenant waited for a slot with work ready, over its life (a counter). */
  throttledMs: number;
  /** Calls started, over its life (a counter). */
  started: number;
}

export class FairScheduler {
  readonly #capacity: number;
  readonly #weightOf: (tenant: string) => number;
  readonly #now: () => number;
  readonly #reserveMax: number;
  readonly #tenants = new Map<string, TenantState>();
  /** Tenants with at least one flow asking. */
  readonly #asking = new Set<TenantState>();
  #inFlight = 0;
  /** Tenants with Loops but no call in flight: each may claim one reserved slot. */
  #idle = 0;
  /** The start tag of the last call granted: a tenant that was idle starts from here, not from its past. */
  #virtualNow = 0;
  #dispatching = false;

  constructor(options: FairSchedulerOptions) {
    this.#capacity = options.capacity > 0 ? Math.floor(options.capacity) || Infinity : Infinity;
    this.#weightOf = options.weightOf;
    this.#now = options.now ?? (() => performance.now());
    this.#reserveMax = Number.isFinite(this.#capacity) ? Math.floor(this.#capacity * (options.reserveFraction ?? 0.1)) : 0;
  }

  get capacity(): number {
    return this.#capacity;
  }
  get inFlight(): number {
    return this.#inFlight;
  }

  register(flow: Flow): FlowHandle {
    const tenant = this.#tenant(flow.tenant);
    const state: FlowState = { flow, inFlight: 0, queued: false, registered: true, waitingSince: undefined, throttledMs: 0 };
    tenant.flows.add(state);
    return {
      ready: () => {
        if (!state.registered) return;
        if (!state.queued) {
          state.queued = true;
          tenant.ring.push(state);
          this.#asking.add(tenant);
        }
        this.#dispatch();
      },
      done: () => {
        state.inFlight -= 1;
        tenant.inFlight -= 1;
        this.#inFlight -= 1;
        if (tenant.inFlight === 0) this.#idle += 1;
        if (!state.registered && state.inFlight === 0) this.#drop(tenant, state);
        this.#dispatch();
      },
      unregister: () => {
        state.registered = false;
        this.#dequeue(tenant, state);
        if (state.inFlight === 0) this.#drop(tenant, state);
        this.#dispatch();
      },
      throttledMs: () => waitedMs(state, this.#now()),
    };
  }

  shares(): TenantShare[] {
    const now = this.#now();
    return [...this.#tenants.values()].map((t) => ({
      tenant: t.name,
      weight: this.#weightOf(t.name),
      inFlight: t.inFlight,
      waitingLoops: t.ring.length,
      throttledMs: waitedMs(t, now),
      started: t.started,
    }));
  }

  #tenant(name: string): TenantState {
    let tenant = this.#tenants.get(name);
    if (!tenant) {
      tenant = { name, flows: new Set(), ring: [], inFlight: 0, finishTag: 0, waitingSince: undefined, throttledMs: 0, started: 0 };
      this.#tenants.set(name, tenant);
      this.#idle += 1;
    }
    return tenant;
  }

  #drop(tenant: TenantState, state: FlowState): void {
    tenant.flows.delete(state);
    // A tenant is forgotten with its last Loop; its counters go with it (the metrics keep what they read).
    if (tenant.flows.size > 0) return;
    this.#tenants.delete(tenant.name);
    this.#asking.delete(tenant);
    if (tenant.inFlight === 0) this.#idle -= 1;
  }

  /** The flow stops waiting (granted, or nothing left to ask for): its waiting time is counted. */
  #served(state: FlowState): void {
    state.queued = false;
    stopWaiting(state, this.#now());
  }

  #dequeue(tenant: TenantState, state: FlowState): void {
    if (!state.queued) return;
    this.#served(state);
    const at = tenant.ring.indexOf(state);
    if (at >= 0) tenant.ring.splice(at, 1);
    if (tenant.ring.length === 0) this.#stopAsking(tenant);
  }

  #stopAsking(tenant: TenantState): void {
    this.#asking.delete(tenant);
    stopWaiting(tenant, this.#now());
  }

  /** Grants free slots until none is left or nobody may take one; re-entered calls (a start that adds) fold in. */
  #dispatch(): void {
    if (this.#dispatching) return;
    this.#dispatching = true;
    try {
      for (;;) {
        const tenant = this.#pick();
        if (!tenant) break;
        const state = tenant.ring.shift()!;
        this.#served(state);
        if (!state.flow.start()) {
          if (tenant.ring.length === 0) this.#stopAsking(tenant);
          continue;
        }
        this.#charge(tenant);
        state.inFlight += 1;
        // Round robin: a flow with more to start asks again behind the tenant's other flows.
        if (state.flow.wantsMore()) {
          state.queued = true;
          tenant.ring.push(state);
        } else if (tenant.ring.length === 0) {
          this.#stopAsking(tenant);
        }
      }
      const now = this.#now();
      for (const tenant of this.#asking) {
        startWaiting(tenant, now);
        for (const state of tenant.ring) startWaiting(state, now);
      }
    } finally {
      this.#dispatching = false;
    }
  }

  #charge(tenant: TenantState): void {
    const start = Math.max(tenant.finishTag, this.#virtualNow);
    tenant.finishTag = start + 1 / this.#weight(tenant);
    this.#virtualNow = start;
    if (tenant.inFlight === 0) this.#idle -= 1;
    tenant.inFlight += 1;
    tenant.started += 1;
    this.#inFlight += 1;
    stopWaiting(tenant, this.#now());
  }

  #weight(tenant: TenantState): number {
    const weight = this.#weightOf(tenant.name);
    return weight > 0 && Number.isFinite(weight) ? weight : 1;
  }

  /** The asking tenant with the smallest share of calls in flight for its weight, then the earliest start tag. */
  #pick(): TenantState | undefined {
    const free = this.#capacity - this.#inFlight;
    if (free <= 0) return undefined;
    const reserve = Math.min(this.#reserveMax, this.#idle);
    let best: TenantState | undefined;
    let bestShare = Infinity;
    let bestTag = Infinity;
    for (const tenant of this.#asking) {
      // A tenant already in flight leaves the reserve to those with nothing in flight.
      if (tenant.inFlight > 0 && free - 1 < reserve) continue;
      const weight = this.#weight(tenant);
      const share = tenant.inFlight / weight;
      const tag = Math.max(tenant.finishTag, this.#virtualNow);
      if (share < bestShare || (share === bestShare && tag < bestTag)) {
        best = tenant;
        bestShare = share;
        bestTag = tag;
      }
    }
    return best;
  }
}
