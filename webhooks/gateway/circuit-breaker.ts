// A per-hook circuit breaker: after `threshold` consecutive failed calls (timeouts, unreachable, errors) a
// hook's requests are answered at once by its failurePolicy for `coolDownMs`, so a tenant's dead function
// cannot hold the API server (and the shared controllers waiting on it) for its full timeout on every request;
// then one probe call is let through (half-open): success closes it, failure opens it again. Pure: the clock is given.

export interface BreakerOptions {
  /** Consecutive failures that open the breaker. */
  threshold: number;
  /** How long an open breaker answers without calling. */
  coolDownMs: number;
  now: () => number;
}

export const DEFAULT_BREAKER_THRESHOLD = 5;
export const DEFAULT_BREAKER_COOL_DOWN_SECONDS = 30;

export type BreakerState = 'closed' | 'open' | 'half-open';

interface Entry {
  failures: number;
  openedAt?: number;
  /** When a half-open probe was let through: others are answered at once until it reports (or a cool-down passes). */
  probeAt?: number;
}

/** What a call learns: whether to call, and for a change of state, the new state (for a condition and a metric). */
export type Admission = { call: true; probe: boolean } | { call: false; retryInMs: number };

export class CircuitBreakers {
  readonly #entries = new Map<string, Entry>();

  constructor(readonly options: BreakerOptions) {}

  state(hook: string): BreakerState {
    const entry = this.#entries.get(hook);
    if (entry?.openedAt === undefined) return 'closed';
    return this.options.now() - entry.openedAt >= this.options.coolDownMs ? 'half-open' : 'open';
  }

  /** Whether this request may call the function: closed yes; open no; half-open the first one only (the probe). */
  admit(hook: string): Admission {
    const entry = this.#entries.get(hook);
    if (entry?.openedAt === undefined) return { call: true, probe: false };
    const now = this.options.now();
    const elapsed = now - entry.openedAt;
    if (elapsed < this.options.coolDownMs) return { call: false, retryInMs: this.options.coolDownMs - elapsed };
    // A probe that never reported (its request failed before the call) does not keep the breaker shut for ever.
    if (entry.probeAt !== undefined && now - entry.probeAt < this.options.coolDownMs) return { call: false, retryInMs: this.options.coolDownMs - (now - entry.probeAt) };
    entry.probeAt = now;
    return { call: true, probe: true };
  }

  /**
   * After a call: returns the state when it changed ('open' when this failure opened or re-opened the
   * breaker, 'closed' when a success closed it), undefined otherwise.
   */
  record(hook: string, failed: boolean): 'open' | 'closed' | undefined {
    const entry: Entry = this.#entries.get(hook) ?? { failures: 0 };
    const wasOpen = entry.openedAt !== undefined;
    if (!failed) {
      this.#entries.delete(hook);
      return wasOpen ? 'closed' : undefined;
    }
    entry.failures += 1;
    this.#entries.set(hook, entry);
    if (wasOpen) {
      // The probe failed: another cool-down.
      entry.openedAt = this.options.now();
      delete entry.probeAt;
      return 'open';
    }
    if (entry.failures < this.options.threshold) return undefined;
    entry.openedAt = this.options.now();
    return 'open';
  }

  /** A hook no longer served: its state goes with it. */
  forget(hook: string): void {
    this.#entries.delete(hook);
  }

  /** Hooks whose breaker is open or half-open, for the gauge. */
  openCount(): number {
    let open = 0;
    for (const entry of this.#entries.values()) if (entry.openedAt !== undefined) open += 1;
    return open;
  }
}
