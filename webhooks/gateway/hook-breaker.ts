// The gateway's per-hook circuit breakers (circuit-breaker.ts) with what users see of them: which call
// failures count, the metrics, and the hook's CircuitOpen condition while its requests are answered by its
// failurePolicy without calling the function.
import type { Registry } from 'prom-client';
import { counter, gauge } from '../../lib/observability/metrics.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import { CircuitBreakers } from './circuit-breaker.ts';
import type { CallFailure, CallFailureKind } from './hook-review.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';

/** Failures that say the function is down or slow; a request it refused (Refused) or one not sent (Throttled, CircuitOpen) says nothing. */
const COUNTED: ReadonlySet<CallFailureKind> = new Set(['Timeout', 'Unreachable', 'ErrorStatus', 'InvalidResponse']);

export interface HookBreakerOptions {
  threshold: number;
  coolDownMs: number;
  now: () => number;
  metrics: Registry;
  reportCondition?: (hook: string, condition: ConditionInput) => void;
}

export class HookBreaker {
  readonly #breakers: CircuitBreakers;
  readonly #options: HookBreakerOptions;
  readonly #open;
  readonly #shortCircuited;

  constructor(options: HookBreakerOptions) {
    this.#options = options;
    this.#breakers = new CircuitBreakers(options);
    this.#open = gauge<'hook'>(options.metrics, 'kubeloop_admission_hook_circuit_open', 'Whether a hook\'s circuit breaker is open (1): its requests are answered by its failurePolicy without a call', ['hook']);
    this.#shortCircuited = counter<'hook' | 'policy'>(
      options.metrics,
      'kubeloop_admission_hook_short_circuited_total',
      'Admission requests answered by the failure policy without calling the function, because the hook\'s circuit breaker was open',
      ['hook', 'policy'],
    );
  }

  /** Undefined: call the function. Otherwise the failure to answer with (its failurePolicy applies). */
  before(hook: ResolvedHook): CallFailure | undefined {
    const admission = this.#breakers.admit(hook.id);
    if (admission.call) return undefined;
    this.#shortCircuited.inc({ hook: hook.id, policy: hook.spec.failurePolicy });
    return {
      kind: 'CircuitOpen',
      message: `was not called: its last ${this.#options.threshold} calls failed, so the gateway answers by the failure policy for ${Math.ceil(admission.retryInMs / 1000)} s more before trying it again`,
    };
  }

  /** After a call (or a call that could not be made): the breaker's count, and on a change the condition and the gauge. */
  after(hook: ResolvedHook, failure: CallFailure | undefined): void {
    if (failure && !COUNTED.has(failure.kind)) return;
    const changed = this.#breakers.record(hook.id, failure !== undefined);
    if (!changed) return;
    this.#open.set({ hook: hook.id }, changed === 'open' ? 1 : 0);
    const seconds = Math.round(this.#options.coolDownMs / 1000);
    this.#options.reportCondition?.(
      hook.id,
      changed === 'open'
        ? {
            type: 'CircuitOpen',
            status: 'True',
            reason: 'ConsecutiveFailures',
            message: `${this.#options.threshold} consecutive calls failed (last: ${failure?.kind}: the function ${failure?.message}); requests are answered by failurePolicy ${hook.spec.failurePolicy} without calling it, and one call is tried every ${seconds} s`,
          }
        : { type: 'CircuitOpen', status: 'False', reason: 'Answering', message: 'the function answered again; every request is sent to it' },
    );
  }
}
