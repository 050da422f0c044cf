// When a Loop shows Throttled: from its cumulative waiting time (for a call slot, for an API token) sampled
// over a sliding window, with hysteresis so the condition does not flap: set at >= 50 % of the window
// spent waiting, cleared only below 10 %. Pure: samples in, decision out.

export const THROTTLE_WINDOW_MS = 60_000;
export const THROTTLE_SET_FRACTION = 0.5;
export const THROTTLE_CLEAR_FRACTION = 0.1;

/** What a Loop waited for: a call slot (its tenant's share of --max-calls-in-flight), API tokens (the shared budget). */
export const THROTTLE_REASONS = ['CallShare', 'ApiBudget'] as const;
export type ThrottleReason = (typeof THROTTLE_REASONS)[number];

/** Cumulative counters read at `at` (ms): time the Loop had work waiting for a call slot and for API tokens. */
export interface ThrottleSample {
  at: number;
  callWaitMs: number;
  apiWaitMs: number;
}

export interface ThrottleState {
  throttled: boolean;
  reason?: ThrottleReason;
  /** Share of the window spent waiting for the reason's budget (0..1). */
  fraction: number;
  windowMs: number;
}

/** One Loop's samples and its current state. */
export class ThrottleTracker {
  readonly #samples: ThrottleSample[] = [];
  #state: ThrottleState;

  /** `throttled`: the reason the Loop's condition already says Throttled for (a runner before this one set it). */
  constructor(
    readonly windowMs = THROTTLE_WINDOW_MS,
    throttled?: ThrottleReason,
  ) {
    this.#state = throttled ? { throttled: true, reason: throttled, fraction: 0, windowMs: 0 } : { throttled: false, fraction: 0, windowMs: 0 };
  }

  get state(): ThrottleState {
    return this.#state;
  }

  /** Adds a sample; returns the new state when it changed (throttled, or its reason), undefined otherwise. */
  observe(sample: ThrottleSample): ThrottleState | undefined {
    this.#samples.push(sample);
    // Keep the newest sample at or before the window's start, so the window is always covered.
    while (this.#samples.length > 2 && this.#samples[1]!.at <= sample.at - this.windowMs) this.#samples.shift();
    const oldest = this.#samples[0]!;
    const span = sample.at - oldest.at;
    // Less than half a window seen: too little to call it a pattern rather than a burst.
    if (span < this.windowMs / 2) return undefined;
    const calls = (sample.callWaitMs - oldest.callWaitMs) / span;
    const api = (sample.apiWaitMs - oldest.apiWaitMs) / span;
    const [reason, fraction]: [ThrottleReason, number] = calls >= api ? ['CallShare', calls] : ['ApiBudget', api];
    const previous = this.#state;
    let next: ThrottleState;
    if (fraction >= THROTTLE_SET_FRACTION) next = { throttled: true, reason, fraction, windowMs: span };
    else if (previous.throttled && fraction >= THROTTLE_CLEAR_FRACTION) next = { ...previous, fraction, windowMs: span };
    else next = { throttled: false, fraction, windowMs: span };
    this.#state = next;
    return next.throttled !== previous.throttled || next.reason !== previous.reason ? next : undefined;
  }
}

/** What a Loop's Throttled condition says True for, if it does. */
export function throttledReason(conditions: ReadonlyArray<{ type: string; status: string; reason?: string | undefined }>): ThrottleReason | undefined {
  const reason = conditions.find((c) => c.type === 'Throttled' && c.status === 'True')?.reason;
  return THROTTLE_REASONS.find((known) => known === reason);
}

/** The condition's message: what waited, how much, and what the budget is. */
export function throttleMessage(state: ThrottleState, budget: { tenant: string; weight: number; maxCallsInFlight?: number; apiQps?: number }): string {
  const share = `${Math.round(state.fraction * 100)}% of the last ${Math.round(state.windowMs / 1000)}s`;
  if (!state.throttled) return `waited ${share} for its tenant's share; not throttled`;
  if (state.reason === 'ApiBudget') {
    return `API requests waited ${share} for tenant ${budget.tenant}'s share (weight ${budget.weight}) of ${budget.apiQps ?? '?'} requests/s shared by all Loops (--fair-api-qps), or for its own --loop-qps`;
  }
  return `keys waited ${share} for a call slot: tenant ${budget.tenant}'s share (weight ${budget.weight}) of ${budget.maxCallsInFlight ?? '?'} calls in flight shared by all Loops (--max-calls-in-flight)`;
}
