// What one admission may make the gateway hold before its function is called: its hook's context objects,
// within --max-context-bytes (looked up until the bound, never built past it), and the review plus that
// context, within its tenant's share of --max-in-flight-request-bytes. A request over either bound gets its
// hook's failurePolicy with the reason; an oversized context also sets ContextBounded=False on the hook.
import type { Registry } from 'prom-client';
import type { KubeObject } from '../../api/meta.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import { counter, gauge } from '../../lib/observability/metrics.ts';
import type { ContextLookup } from './context-cache.ts';
import type { CallFailure } from './hook-review.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';
import { RequestByteBudget } from './request-byte-budget.ts';

export interface RequestBoundsOptions {
  contexts: ContextLookup;
  metrics: Registry;
  maxContextBytes: number;
  maxInFlightBytes: number;
  /** Tenants sharing the byte budget (those with a served hook). */
  tenants: () => number;
  reportCondition?: (hook: string, condition: ConditionInput) => void;
}

export type Prepared = { ok: true; context: Record<string, KubeObject | null>; release: () => void } | { ok: false; failure: CallFailure };

export class RequestBounds {
  readonly #options: RequestBoundsOptions;
  readonly #budget: RequestByteBudget;
  /** Hooks whose ContextBounded is False, so it is set True again on their next request within bounds. */
  readonly #overBound = new Set<string>();
  readonly #refused;
  readonly #inFlight;

  constructor(options: RequestBoundsOptions) {
    this.#options = options;
    this.#budget = new RequestByteBudget(options.maxInFlightBytes);
    this.#refused = counter<'reason'>(options.metrics, 'kubeloop_admission_requests_over_bounds_total', 'Admission requests answered by their failurePolicy because of a gateway bound, by reason (ContextPending, ContextTooLarge, Throttled: over the tenant\'s share of request bytes)', ['reason']);
    this.#inFlight = gauge(options.metrics, 'kubeloop_admission_request_bytes_in_flight', 'Review and context bytes the gateway holds for admissions in flight (bounded by --max-in-flight-request-bytes)');
  }

  /** The context of one request, its bytes reserved for its tenant until release(); or the failure to answer by. */
  prepare(hook: ResolvedHook, tenant: string, object: KubeObject | undefined, requestNamespace: string | undefined, reviewBytes: number): Prepared {
    const looked = this.#options.contexts.lookup(hook, object, requestNamespace, this.#options.maxContextBytes);
    if (!looked.ok) {
      this.#refused.inc({ reason: looked.reason });
      if (looked.reason === 'ContextTooLarge') this.#report(hook, looked.message);
      return { ok: false, failure: { kind: looked.reason, message: `was not called: ${looked.message}` } };
    }
    if (this.#overBound.delete(hook.id)) this.#options.reportCondition?.(hook.id, { type: 'ContextBounded', status: 'True', reason: 'WithinBounds', message: `the context objects fit --max-context-bytes (${this.#options.maxContextBytes})` });
    const bytes = reviewBytes + looked.bytes;
    this.#budget.setTenants(this.#options.tenants());
    const grant = this.#budget.tryAcquire(tenant, bytes);
    if (!grant.ok) {
      this.#refused.inc({ reason: 'Throttled' });
      return { ok: false, failure: { kind: 'Throttled', message: `was not called: tenant "${tenant}" ${grant.message}` } };
    }
    this.#inFlight.inc(bytes);
    let released = false;
    return {
      ok: true,
      context: looked.context,
      release: () => {
        if (released) return;
        released = true;
        this.#budget.release(tenant, bytes);
        this.#inFlight.dec(bytes);
      },
    };
  }

  #report(hook: ResolvedHook, message: string): void {
    this.#overBound.add(hook.id);
    this.#options.reportCondition?.(hook.id, { type: 'ContextBounded', status: 'False', reason: 'ContextTooLarge', message, ...(hook.generation !== undefined ? { observedGeneration: hook.generation } : {}) });
  }
}
