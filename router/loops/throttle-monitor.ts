// Samples every running Loop's waiting time (for a call slot, for API tokens) 6 times a window and sets its
// Throttled condition on a transition (throttle-condition.ts decides, with hysteresis).
import type { LoopConfig } from '../base/loop-spec.ts';
import type { FairScheduler } from '../base/fair-scheduler.ts';
import { THROTTLE_WINDOW_MS, throttleMessage, ThrottleTracker } from '../base/throttle-condition.ts';
import { tenantOf } from '../base/tenant-weights.ts';
import type { ConditionInput } from '../../lib/kube/conditions.ts';

export interface ThrottleMonitorOptions {
  scheduler?: FairScheduler;
  apiQps?: number;
  weightOf: (tenant: string) => number;
  loops: () => Array<{ name: string; config: LoopConfig; apiThrottledMs: number }>;
  report: (name: string, condition: ConditionInput) => void;
  /** The condition's window; sampled six times in it. THROTTLE_WINDOW_MS by default. */
  windowMs?: number;
  now?: () => number;
}

export class ThrottleMonitor {
  readonly #o: ThrottleMonitorOptions;
  readonly #trackers = new Map<string, ThrottleTracker>();
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

  /** One sample of every running Loop; a Loop gone is forgotten (a new one starts unthrottled). */
  tick(): void {
    const now = (this.#o.now ?? (() => performance.now()))();
    const calls = new Map((this.#o.scheduler?.flowShares() ?? []).map((share) => [share.id, share.throttledMs]));
    const seen = new Set<string>();
    for (const { name, config, apiThrottledMs } of this.#o.loops()) {
      const id = config.id;
      seen.add(id);
      let tracker = this.#trackers.get(id);
      if (!tracker) this.#trackers.set(id, (tracker = new ThrottleTracker(this.#o.windowMs)));
      const change = tracker.observe({ at: now, callWaitMs: calls.get(id) ?? 0, apiWaitMs: apiThrottledMs });
      if (!change) continue;
      const tenant = tenantOf(config);
      const budget = { tenant, weight: this.#o.weightOf(tenant), ...(this.#o.scheduler ? { maxCallsInFlight: this.#o.scheduler.capacity } : {}), ...(this.#o.apiQps ? { apiQps: this.#o.apiQps } : {}) };
      this.#o.report(name, {
        type: 'Throttled',
        status: change.throttled ? 'True' : 'False',
        reason: change.throttled ? change.reason! : 'NotThrottled',
        message: throttleMessage(change, budget),
      });
    }
    for (const id of this.#trackers.keys()) if (!seen.has(id)) this.#trackers.delete(id);
  }
}
