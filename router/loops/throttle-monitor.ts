// Samples every running Loop's waiting time (for a call slot, for API tokens) 6 times a window and sets its
// Throttled condition on a transition (throttle-condition.ts decides, with hysteresis).
import type { LoopConfig } from '../base/loop-spec.ts';
import { THROTTLE_WINDOW_MS, throttledReason, throttleMessage, ThrottleTracker, type ThrottleReason, type ThrottleState } from '../base/throttle-condition.ts';
import type { LaunchedLoop } from './loop-launcher.ts';
import type { LoopCondition } from '../../api/loop.ts';
import { tenantOf } from '../base/tenant-weights.ts';
import type { ConditionInput } from '../../lib/kube/conditions.ts';

/** One running Loop as the sampler reads it: the same object for as long as that runner runs. */
export interface ThrottleSource {
  readonly name: string;
  readonly config: LoopConfig;
  /**
   * What its Throttled condition said when this runner started (the runner before it, or the Loop's status after a
   * router restart): the new runner's samples start afresh, its condition goes on from there.
   */
  readonly throttledAtStart: ThrottleReason | undefined;
  /** Milliseconds its keys waited for a router call slot, over its life (a counter). */
  callWaitMs(): number;
  /** Milliseconds its API requests waited for tokens (the shared budget or its own cap), over its life. */
  apiWaitMs(): number;
}

/** A launched runner's source; `conditions`: the Loop's as the runner starts (loop-status.ts). */
export function throttleSource(name: string, launched: Pick<LaunchedLoop, 'runner' | 'apiThrottledMs'>, conditions: LoopCondition[]): ThrottleSource {
  return { name, config: launched.runner.loop, throttledAtStart: throttledReason(conditions), callWaitMs: () => launched.runner.callWaitMs(), apiWaitMs: () => launched.apiThrottledMs?.() ?? 0 };
}

export interface ThrottleMonitorOptions {
  /** The router's cap on calls in flight, for the condition's message. */
  maxCallsInFlight?: number;
  apiQps?: number;
  weightOf: (tenant: string) => number;
  loops: () => Iterable<ThrottleSource>;
  report: (name: string, condition: ConditionInput) => void;
  /** The condition's window; sampled six times in it. THROTTLE_WINDOW_MS by default. */
  windowMs?: number;
  now?: () => number;
}

export class ThrottleMonitor {
  readonly #o: ThrottleMonitorOptions;
  // Keyed by the source, so a runner that stops takes its samples with it, with no pass to find the gone.
  readonly #trackers = new WeakMap<ThrottleSource, ThrottleTracker>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ThrottleMonitorOptions) {
    this.#o = options;
  }

  start(): void {
    this.#timer = setInterval(() => this.tick(), (this.#o.windowMs ?? THROTTLE_WINDOW_MS) / 6);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One sample of every running Loop. */
  tick(): void {
    const now = (this.#o.now ?? (() => performance.now()))();
    for (const source of this.#o.loops()) {
      let tracker = this.#trackers.get(source);
      if (!tracker) this.#trackers.set(source, (tracker = new ThrottleTracker(this.#o.windowMs, source.throttledAtStart)));
      const change = tracker.observe({ at: now, callWaitMs: source.callWaitMs(), apiWaitMs: source.apiWaitMs() });
      if (change) this.#report(source, change);
    }
  }

  #report(source: ThrottleSource, change: ThrottleState): void {
    const { maxCallsInFlight, apiQps } = this.#o;
    const tenant = tenantOf(source.config);
    const budget = { tenant, weight: this.#o.weightOf(tenant), ...(maxCallsInFlight ? { maxCallsInFlight } : {}), ...(apiQps ? { apiQps } : {}) };
    this.#o.report(source.name, {
      type: 'Throttled',
      status: change.throttled ? 'True' : 'False',
      reason: change.throttled ? change.reason! : 'NotThrottled',
      message: throttleMessage(change, budget),
    });
  }
}
