// Fairness across tenants, assembled from the router's options: the cap on calls in flight (fair-scheduler.ts),
// the shared API budget (tenant-budget.ts), the weights and their metrics. docs/router.md#fairness-across-tenants.
import type { RateLimit } from '../../lib/kube/rate-limiter.ts';
import type { Registry } from '../../lib/observability/metrics.ts';
import { DEFAULT_FUNCTION_CONNECTIONS } from '../../lib/function-client/function-client.ts';
import { FairScheduler } from './fair-scheduler.ts';
import { TenantBudget } from './tenant-budget.ts';
import { registerTenantMetrics, type TenantMetricsSources } from './tenant-metrics.ts';
import { TenantWeights } from './tenant-weights.ts';

/** 32 Loops at the default function.maxConcurrency (8) at once; more wait their tenant's turn. */
export const DEFAULT_MAX_CALLS_IN_FLIGHT = 256;
/** Ten times the old per-Loop bucket (50/100), shared: one busy Loop alone gets all of it. */
export const DEFAULT_FAIR_API_LIMIT: RateLimit = { qps: 500, burst: 1000 };

export interface FairnessOptions {
  /** Function calls in flight across all Loops; 0 turns the cap off. */
  maxCallsInFlight?: number;
  /** What all Loops' requests (as their ServiceAccounts) may use together; qps 0 turns it off. */
  apiRateLimit?: RateLimit;
  /** Weight per tenant (namespace, or `cluster`); 1 when not named. */
  weights?: Map<string, number>;
  /** Tenants with their own metrics label; the rest are `other`. 50 by default. */
  maxLabelledTenants?: number;
  /** The Throttled condition's window (sampled six times per window); 60 s by default, shorter in tests. */
  throttleWindowMs?: number;
}

export interface Fairness {
  scheduler?: FairScheduler;
  budget?: TenantBudget;
  weights: TenantWeights;
  throttleWindowMs?: number;
}

/**
 * Connections the router keeps per function origin: at least as many as the cap admits calls, so every call the
 * fair scheduler lets through connects at once. A smaller pool would queue them again, first come first served,
 * and a busy tenant's calls would hold a quiet one's behind them whenever both call one function (a shared
 * platform function, one Service for many teams). Undefined (the client's own default) without the cap.
 */
export function functionConnections(options: FairnessOptions | false | undefined, clientDefault = DEFAULT_FUNCTION_CONNECTIONS): number | undefined {
  if (options === false) return undefined;
  const capacity = options?.maxCallsInFlight ?? DEFAULT_MAX_CALLS_IN_FLIGHT;
  return capacity > clientDefault ? capacity : undefined;
}

/** `loopLabel`: the router's bound on per-Loop series (RouterMetrics.loopLabel); every Loop by name when omitted. */
export function createFairness(options: FairnessOptions | false | undefined, registry: Registry, loopLabel: (loop: string) => string = (loop) => loop): Fairness {
  const weights = new TenantWeights(options ? options.weights : undefined);
  if (options === false) return { weights };
  const weightOf = (tenant: string) => weights.weightOf(tenant);
  const capacity = options?.maxCallsInFlight ?? DEFAULT_MAX_CALLS_IN_FLIGHT;
  const scheduler = capacity > 0 ? new FairScheduler({ capacity, weightOf }) : undefined;
  const sources: TenantMetricsSources = { scheduler, weightOf, maxLabelledTenants: options?.maxLabelledTenants };
  const apiWait = registerTenantMetrics(registry, sources);
  const limit = options?.apiRateLimit ?? DEFAULT_FAIR_API_LIMIT;
  const budget = limit.qps > 0 ? new TenantBudget({ limit, weightOf, onWait: (_tenant, loop, seconds) => apiWait.observe({ loop: loopLabel(loop) }, seconds) }) : undefined;
  sources.budget = budget;
  return { ...(scheduler ? { scheduler } : {}), ...(budget ? { budget } : {}), weights, ...(options?.throttleWindowMs ? { throttleWindowMs: options.throttleWindowMs } : {}) };
}
