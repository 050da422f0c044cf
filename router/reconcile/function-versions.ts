// A running Loop's other function versions. The shadow is offered every call the live version gets, never
// awaited by the reconcile and never applied; beyond its own concurrency the offer is dropped and counted.
// Its answer is compared with the live one by effect (lib/replay's compareResponses, as replay and diff
// compare), and a divergence is counted, shown (ShadowDiverged) and recorded as a fixture pair. The canary
// answers for its share of the keys until its error budget is spent, then rolls back by itself.
import type { Logger } from 'pino';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { compareResponses, formatDifferences } from '../../lib/replay/compare-responses.ts';
import { inCanaryShare } from '../../lib/versions/canary-share.ts';
import { CANARY_ROLLED_BACK, ErrorBudget } from '../../lib/versions/error-budget.ts';
import { DivergenceTracker, SHADOW_DIVERGED, type DivergenceOptions } from '../../lib/versions/shadow-divergence.ts';
import type { CanaryConfig, FunctionTarget, LoopConfig } from '../base/loop-spec.ts';
import type { RouterMetrics } from '../base/router-metrics.ts';
import type { DispatchResult, FunctionInvoker } from './dispatch.ts';
import type { ShadowPairs } from './shadow-pairs.ts';

/** A condition of the Loop as a version reports it; the Loop controller adds times and writes it. */
export interface VersionCondition {
  type: typeof SHADOW_DIVERGED | typeof CANARY_ROLLED_BACK;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface VersionReports {
  condition(condition: VersionCondition, warning?: { reason: string; message: string }): void;
  /** The canary rolled back: the keys of its share are sent to the stable version again. */
  rolledBack(): void;
}

export interface VersionDeps {
  invoke: FunctionInvoker;
  metrics: RouterMetrics;
  logger: Logger;
  /** Where divergences are recorded as fixture pairs; none: counted and shown only. */
  shadowPairs?: ShadowPairs;
  /** ShadowDiverged's quiet time and refresh interval. */
  divergence?: DivergenceOptions;
  now?: () => number;
}

/** Where one reconcile's calls go when not to the live URL. */
export interface Route {
  url: string;
  target: FunctionTarget;
}

/** The message suffix that ties a CanaryRolledBack condition to the canary spec it rolled back. */
export const canaryTag = (canary: Pick<CanaryConfig, 'fingerprint'>): string => `(canary ${canary.fingerprint})`;

/** Whether a CanaryRolledBack condition (written or remembered) holds for this canary spec. */
export function rolledBackBy(condition: { status?: string; message?: string } | undefined, canary: CanaryConfig): boolean {
  return condition?.status === 'True' && (condition.message ?? '').endsWith(canaryTag(canary));
}

/** True for the failures that spend a canary's budget: 5xx, timeouts, unreachable, invalid replies, 4xx. */
export const spendsBudget = (result: DispatchResult): boolean => result.kind === 'failed' || result.kind === 'rejected';

export class FunctionVersions {
  readonly #loop: LoopConfig;
  readonly #deps: VersionDeps;
  readonly #reports: VersionReports;
  readonly #urls: { shadow: () => string | undefined; canary: () => string | undefined };
  readonly #tracker: DivergenceTracker;
  readonly #budget: ErrorBudget | undefined;
  #shadowInFlight = 0;
  #rolledBack: boolean;
  readonly #pending = new Set<Promise<void>>();

  constructor(loop: LoopConfig, deps: VersionDeps, reports: VersionReports, urls: { shadow: () => string | undefined; canary: () => string | undefined }) {
    this.#loop = loop;
    this.#deps = deps;
    this.#reports = reports;
    this.#urls = urls;
    this.#tracker = new DivergenceTracker(deps.divergence);
    this.#budget = loop.canary ? new ErrorBudget(loop.canary.budget) : undefined;
    this.#rolledBack = loop.canary?.rolledBackAtStart === true;
  }

  get canaryRolledBack(): boolean {
    return this.#rolledBack;
  }

  /** The conditions a Loop starts with: no divergence seen yet, the canary active (or still rolled back). */
  start(): void {
    const { shadow, canary } = this.#loop;
    if (shadow) this.#reports.condition({ type: SHADOW_DIVERGED, status: 'False', reason: 'NoDivergence', message: 'no call of the shadow has diverged since the Loop started' });
    if (canary && !this.#rolledBack) {
      this.#reports.condition({ type: CANARY_ROLLED_BACK, status: 'False', reason: 'CanaryActive', message: `${canary.weight} % of the keys go to the canary ${canaryTag(canary)}` });
    }
  }

  /** The canary's route for this key, or undefined for the live version. */
  route(key: string): Route | undefined {
    const canary = this.#loop.canary;
    if (!canary || this.#rolledBack || !inCanaryShare(key, canary.weight)) return undefined;
    const url = this.#urls.canary();
    return url === undefined ? undefined : { url, target: canary };
  }

  /** Whether a key is in the canary's share (whatever its state): the keys to send again after a rollback. */
  inCanaryShare(key: string): boolean {
    return this.#loop.canary !== undefined && inCanaryShare(key, this.#loop.canary.weight);
  }

  /** One call of a reconcile was answered (by the route's version, or the live one). */
  called(request: ReconcileRequest, result: DispatchResult, route: Route | undefined): void {
    if (route) this.#canaryAnswered(result);
    if (this.#loop.shadow) this.#offerShadow(this.#loop.shadow, request, result);
  }

  /** Waits for the shadow calls in flight (stopping a Loop, tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  #canaryAnswered(result: DispatchResult): void {
    const canary = this.#loop.canary!;
    const failed = spendsBudget(result);
    this.#deps.metrics.canaryCalls.inc({ loop: this.#loop.id, result: failed ? 'error' : 'ok' });
    const state = this.#budget!.record(failed, this.#now());
    if (!state.spent || this.#rolledBack) return;
    this.#rolledBack = true;
    this.#deps.metrics.canaryRollbacks.inc({ loop: this.#loop.id });
    const bound = canary.budget.maxErrors !== undefined && state.errors > canary.budget.maxErrors ? `more than ${canary.budget.maxErrors}` : `more than ${(canary.budget.ratio ?? 0) * 100} %`;
    const message = `${state.errors} of ${state.calls} calls to the canary failed in the last ${canary.budget.windowMs / 1000} s (${bound}); every key goes to the stable version until spec.function.canary changes ${canaryTag(canary)}`;
    this.#deps.logger.warn({ loop: this.#loop.id, errors: state.errors, calls: state.calls }, 'canary rolled back: its error budget is spent');
    this.#reports.condition({ type: CANARY_ROLLED_BACK, status: 'True', reason: 'ErrorBudgetSpent', message }, { reason: 'CanaryRolledBack', message });
    this.#reports.rolledBack();
  }

  #offerShadow(shadow: FunctionTarget, request: ReconcileRequest, live: DispatchResult): void {
    const loop = this.#loop.id;
    const url = this.#urls.shadow();
    if (url === undefined) return this.#deps.metrics.shadowCalls.inc({ loop, result: 'unresolved' });
    // Bounded: a slow shadow costs its own sockets and nothing else; what does not fit is dropped.
    if (this.#shadowInFlight >= shadow.maxConcurrency) return this.#deps.metrics.shadowCalls.inc({ loop, result: 'dropped' });
    this.#shadowInFlight += 1;
    const call = this.#deps
      .invoke(request, { url, timeoutMs: shadow.timeoutMs, signingKey: shadow.signingKey, caBundle: shadow.caBundle })
      .then((answer) => this.#compare(request, live, answer))
      .catch((error: unknown) => this.#deps.logger.error({ loop, err: error instanceof Error ? error.stack : String(error) }, 'shadow comparison crashed'))
      .finally(() => {
        this.#shadowInFlight -= 1;
        this.#pending.delete(call);
      });
    this.#pending.add(call);
  }

  #compare(request: ReconcileRequest, live: DispatchResult, shadow: DispatchResult): void {
    const loop = this.#loop.id;
    if (live.kind !== 'ok') return this.#deps.metrics.shadowCalls.inc({ loop, result: 'live_failed' });
    const differences =
      shadow.kind === 'ok' ? formatDifferences(compareResponses(live.response, shadow.response, { request }), '') : `the shadow failed: ${shadow.message}`;
    const now = this.#now();
    if (differences === '') {
      this.#deps.metrics.shadowCalls.inc({ loop, result: 'agreed' });
      const change = this.#tracker.agreed(now);
      if (change) this.#reports.condition({ type: SHADOW_DIVERGED, ...change });
      return;
    }
    this.#deps.metrics.shadowCalls.inc({ loop, result: shadow.kind === 'ok' ? 'diverged' : 'shadow_failed' });
    const o = request.object;
    const subject = `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata?.name ?? ''}`;
    const firstLines = differences.split('\n').slice(0, 3).join('; ');
    this.#deps.logger.info({ loop, object: subject, differences: firstLines }, 'shadow diverged');
    if (shadow.kind === 'ok') this.#deps.shadowPairs?.record(loop, request, live.response, shadow.response, firstLines);
    const change = this.#tracker.divergedOn(subject, firstLines, now);
    if (change) this.#reports.condition({ type: SHADOW_DIVERGED, ...change });
  }

  #now(): number {
    return this.#deps.now?.() ?? Date.now();
  }
}
