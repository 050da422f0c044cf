// The gateway's side of AdmissionHooks' shadows and canaries. A shadow is asked about every request the
// live function gets, after the live answer and never awaited by the admission; its answer is never
// enforced, only compared as `kubeloop diff --hook` compares (lib/replay/compare-admission.ts), counted by
// decision and shown (ShadowDiverged). A canary answers its share of the requests until its error budget
// is spent, then every request goes to the live function again (CanaryRolledBack) until its spec changes.
import type { Registry } from 'prom-client';
import type { SecretKeyRef } from '../../api/loop.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../lib/contract/admission-types.ts';
import { validateAdmissionResponse } from '../../lib/contract/validate.ts';
import { counter } from '../../lib/observability/metrics.ts';
import { compareAdmissionResponses } from '../../lib/replay/compare-admission.ts';
import { formatDifferences } from '../../lib/replay/compare-responses.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import { inCanaryShare } from '../../lib/versions/canary-share.ts';
import { CANARY_ROLLED_BACK, ErrorBudget } from '../../lib/versions/error-budget.ts';
import { DivergenceTracker, SHADOW_DIVERGED } from '../../lib/versions/shadow-divergence.ts';
import type { CallResult, FunctionCaller } from './function-caller.ts';
import type { HookKeys } from '../base/hook-signing-keys.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';
import type { ResolvedCanary } from '../base/hook-versions-spec.ts';

/** A shadow's calls in flight per hook; beyond them a request is not shadowed (and counted as dropped). */
export const DEFAULT_SHADOW_IN_FLIGHT = 16;

export interface HookVersionOptions {
  caller: FunctionCaller;
  /** A version's signing keys (its own signingSecretRef); unsigned when omitted. */
  keys?: (ref: SecretKeyRef | undefined) => Promise<HookKeys>;
  metrics: Registry;
  logger: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
  reportCondition?: (hook: string, condition: ConditionInput) => void;
  shadowInFlight?: number;
  now?: () => number;
}

/** What one answer looked like, for the decisions metric: bounded labels. */
const decision = (response: AdmissionResponse): 'allowed' | 'denied' | 'patched' => (!response.allowed ? 'denied' : (response.patch ?? []).length > 0 ? 'patched' : 'allowed');

interface HookState {
  shadowFingerprint?: string;
  tracker?: DivergenceTracker;
  inFlight: number;
  canaryFingerprint?: string;
  budget?: ErrorBudget;
  rolledBack: boolean;
}

/** A request routed to a canary, and how what its call cost is charged to that canary. */
export interface CanaryChoice {
  canary: ResolvedCanary;
  answered(failed: boolean): void;
}

export class GatewayVersions {
  readonly #o: HookVersionOptions;
  readonly #state = new Map<string, HookState>();
  readonly #shadowCalls;
  readonly #shadowDecisions;
  readonly #canaryCalls;
  readonly #rollbacks;

  constructor(options: HookVersionOptions) {
    this.#o = options;
    const m = options.metrics;
    this.#shadowCalls = counter<'hook' | 'result'>(m, 'kubeloop_admission_shadow_calls_total', 'Admission requests offered to hooks\' shadow functions, by result: agreed, diverged, shadow_failed, live_failed (not compared), dropped (too many in flight)', ['hook', 'result']);
    this.#shadowDecisions = counter<'hook' | 'live' | 'shadow'>(m, 'kubeloop_admission_shadow_decisions_total', 'Compared shadow calls by the live decision and the shadow\'s (allowed, denied, patched): live="allowed",shadow="denied" counts what a stricter version would deny', ['hook', 'live', 'shadow']);
    this.#canaryCalls = counter<'hook' | 'result'>(m, 'kubeloop_admission_canary_calls_total', 'Admission requests answered by hooks\' canary functions, by result: ok or error', ['hook', 'result']);
    this.#rollbacks = counter<'hook'>(m, 'kubeloop_admission_canary_rollbacks_total', 'Hook canaries rolled back because their error budget was spent', ['hook']);
  }

  /**
   * The canary this request goes to, or undefined for the live function. The choice carries its own charge:
   * what the call cost is spent from the budget of the canary chosen, never from one resolved since.
   */
  route(hook: ResolvedHook, request: { uid: string; namespace?: string | undefined }): CanaryChoice | undefined {
    const canary = hook.versions.canary;
    if (!canary) return undefined;
    const state = this.#stateOf(hook);
    if (state.rolledBack) return undefined;
    if (canary.namespaces && !canary.namespaces.has(request.namespace ?? '')) return undefined;
    if (canary.weight !== undefined && !inCanaryShare(request.uid, canary.weight)) return undefined;
    return { canary, answered: (failed) => this.#charge(hook, canary, state, failed) };
  }

  keys(ref: SecretKeyRef | undefined): Promise<HookKeys> {
    return this.#o.keys ? this.#o.keys(ref) : Promise.resolve({ ok: true, keys: undefined });
  }

  /** The chosen canary answered (`failed`: no usable answer): spends its budget, rolls it back when spent. */
  #charge(hook: ResolvedHook, canary: ResolvedCanary, state: HookState, failed: boolean): void {
    // A canary replaced while the call ran has a budget of its own, which this call never touched.
    if (state.canaryFingerprint !== canary.fingerprint || !state.budget) return;
    this.#canaryCalls.inc({ hook: hook.id, result: failed ? 'error' : 'ok' });
    const budget = state.budget.record(failed, this.#now());
    if (!budget.spent || state.rolledBack) return;
    state.rolledBack = true;
    this.#rollbacks.inc({ hook: hook.id });
    const message = `${budget.errors} of ${budget.calls} requests to the canary ${canary.url} failed in the last ${canary.budget.windowMs / 1000} s; every request goes to the live function until spec.function.canary changes (canary ${canary.fingerprint})`;
    this.#o.logger.warn({ hook: hook.id, errors: budget.errors, calls: budget.calls }, 'hook canary rolled back: its error budget is spent');
    this.#o.reportCondition?.(hook.id, { type: CANARY_ROLLED_BACK, status: 'True', reason: 'ErrorBudgetSpent', message });
  }

  /** Asks the shadow about the request the live function answered; returns at once. */
  shadow(hook: ResolvedHook, request: AdmissionRequest, live: CallResult): void {
    const shadow = hook.versions.shadow;
    if (!shadow) return;
    const state = this.#stateOf(hook);
    if (state.inFlight >= (this.#o.shadowInFlight ?? DEFAULT_SHADOW_IN_FLIGHT)) return this.#shadowCalls.inc({ hook: hook.id, result: 'dropped' });
    state.inFlight += 1;
    void (async () => {
      try {
        const keys = await this.keys(shadow.fn.signingSecretRef);
        const answer: CallResult = keys.ok
          ? await this.#o.caller.call(shadow.url, request, { timeoutMs: hook.functionTimeoutMs, signingKeys: keys.keys, caBundle: shadow.caBundle })
          : { ok: false, failure: { kind: 'Unreachable', message: `was not called: ${keys.message}` } };
        this.#compare(hook, state, request, live, answer);
      } catch (error) {
        this.#o.logger.warn({ hook: hook.id, err: (error as Error).message }, 'shadow comparison failed');
      } finally {
        state.inFlight -= 1;
      }
    })();
  }

  #compare(hook: ResolvedHook, state: HookState, request: AdmissionRequest, live: CallResult, shadow: CallResult): void {
    const liveAnswer = live.ok ? validateAdmissionResponse(live.reply) : undefined;
    if (!liveAnswer?.ok) return this.#shadowCalls.inc({ hook: hook.id, result: 'live_failed' });
    const shadowAnswer = shadow.ok ? validateAdmissionResponse(shadow.reply) : undefined;
    let differences: string;
    if (shadowAnswer?.ok) {
      this.#shadowDecisions.inc({ hook: hook.id, live: decision(liveAnswer.value), shadow: decision(shadowAnswer.value) });
      differences = formatDifferences(compareAdmissionResponses(request, liveAnswer.value, shadowAnswer.value), '');
    } else {
      differences = `the shadow failed: ${shadow.ok ? (shadowAnswer?.errors ?? []).slice(0, 2).join('; ') : shadow.failure.message}`;
    }
    const now = this.#now();
    if (differences === '') {
      this.#shadowCalls.inc({ hook: hook.id, result: 'agreed' });
      const change = state.tracker!.agreed(now);
      if (change) this.#o.reportCondition?.(hook.id, { type: SHADOW_DIVERGED, ...change });
      return;
    }
    this.#shadowCalls.inc({ hook: hook.id, result: shadowAnswer?.ok ? 'diverged' : 'shadow_failed' });
    const object = request.object ?? request.oldObject;
    const subject = `${request.operation} ${request.requestKind.kind} ${request.namespace ? `${request.namespace}/` : ''}${request.name || object?.metadata?.name || object?.metadata?.generateName || ''}`;
    const first = differences.split('\n').slice(0, 3).join('; ');
    this.#o.logger.info({ hook: hook.id, object: subject, differences: first }, 'shadow diverged');
    const change = state.tracker!.divergedOn(subject, first, now);
    if (change) this.#o.reportCondition?.(hook.id, { type: SHADOW_DIVERGED, ...change });
  }

  /** The hook's state, started anew when its shadow's or canary's spec changed. */
  #stateOf(hook: ResolvedHook): HookState {
    let state = this.#state.get(hook.id);
    if (!state) {
      state = { inFlight: 0, rolledBack: false };
      this.#state.set(hook.id, state);
    }
    const { shadow, canary } = hook.versions;
    if (state.shadowFingerprint !== shadow?.fingerprint) {
      state.shadowFingerprint = shadow?.fingerprint;
      state.tracker = new DivergenceTracker();
    }
    if (state.canaryFingerprint !== canary?.fingerprint) {
      state.canaryFingerprint = canary?.fingerprint;
      state.budget = canary ? new ErrorBudget(canary.budget) : undefined;
      state.rolledBack = false;
      // A new canary (or this gateway's first request for it) starts with a full budget.
      if (canary) this.#o.reportCondition?.(hook.id, { type: CANARY_ROLLED_BACK, status: 'False', reason: 'CanaryActive', message: `the canary ${canary.url} answers its share of the requests (canary ${canary.fingerprint})` });
    }
    return state;
  }

  #now(): number {
    return this.#o.now?.() ?? Date.now();
  }
}
