// A canary's error budget over a sliding window: calls and failures counted per second (so a long window
// holds at most one entry per second, never one per call), spent when the failures pass either bound.
// Pure: the caller passes the time, so every case is unit-tested without a clock.

/** The condition a canary shows: False while it answers its share, True once its budget was spent and it was rolled back. */
export const CANARY_ROLLED_BACK = 'CanaryRolledBack';

export interface BudgetLimits {
  /** More than this many failures in the window spend the budget. */
  maxErrors?: number | undefined;
  /** A failure share above this (0..1), over at least CANARY_MIN_CALLS calls in the window, spends it. */
  ratio?: number | undefined;
  windowMs: number;
}

/** A ratio judged on fewer calls is noise: one failure of the first call would be 100 %. */
export const CANARY_MIN_CALLS = 10;

export interface BudgetState {
  calls: number;
  errors: number;
  spent: boolean;
}

/** Whether `errors` of `calls` in the window spend a budget with these limits. */
export function budgetSpent(limits: BudgetLimits, calls: number, errors: number): boolean {
  if (limits.maxErrors !== undefined && errors > limits.maxErrors) return true;
  return limits.ratio !== undefined && calls >= CANARY_MIN_CALLS && errors / calls > limits.ratio;
}

export class ErrorBudget {
  /** Oldest first: [second, calls, errors]. */
  readonly #seconds: Array<[number, number, number]> = [];
  #calls = 0;
  #errors = 0;

  constructor(readonly limits: BudgetLimits) {}

  /** Counts one call (failed or not) at `nowMs` and tells whether the budget is spent now. */
  record(failed: boolean, nowMs: number): BudgetState {
    this.#expire(nowMs);
    const second = Math.floor(nowMs / 1000);
    const last = this.#seconds.at(-1);
    if (last && last[0] === second) {
      last[1] += 1;
      if (failed) last[2] += 1;
    } else {
      this.#seconds.push([second, 1, failed ? 1 : 0]);
    }
    this.#calls += 1;
    if (failed) this.#errors += 1;
    return this.state(nowMs);
  }

  state(nowMs: number): BudgetState {
    this.#expire(nowMs);
    return { calls: this.#calls, errors: this.#errors, spent: budgetSpent(this.limits, this.#calls, this.#errors) };
  }

  #expire(nowMs: number): void {
    const oldest = Math.floor((nowMs - this.limits.windowMs) / 1000);
    while (this.#seconds.length > 0 && this.#seconds[0]![0] <= oldest) {
      const [, calls, errors] = this.#seconds.shift()!;
      this.#calls -= calls;
      this.#errors -= errors;
    }
  }
}
