// Per-tenant metrics of the fair scheduler and the API budget, read at scrape time. The label set is
// bounded: the first N tenants seen keep their own `tenant` label for the router's life, the rest are `other`.
import { BoundedLabel, OTHER_LABEL } from '../../lib/observability/bounded-label.ts';
import { Counter, Gauge, Histogram, type Registry } from '../../lib/observability/metrics.ts';
import type { FairScheduler } from './fair-scheduler.ts';
import type { TenantBudget } from './tenant-budget.ts';
import { CLUSTER_TENANT } from '../../api/tenant.ts';

export const DEFAULT_LABELLED_TENANTS = 50;

/** The tenant labels: the cluster kinds' tenant always by name, then the first tenants seen, the rest `other`. */
export const tenantLabels = (max: number = DEFAULT_LABELLED_TENANTS): BoundedLabel => new BoundedLabel(max, [CLUSTER_TENANT]);

/**
 * Sums per-tenant lifetime counters into per-label totals that never go down, though a tenant's own counter
 * starts again from zero when it comes back after its last Loop stopped.
 */
export class MonotonicSums {
  readonly #last = new Map<string, number>();
  readonly #totals = new Map<string, number>();

  update(samples: Iterable<{ tenant: string; label: string; value: number }>): Map<string, number> {
    const seen = new Set<string>();
    for (const { tenant, label, value } of samples) {
      seen.add(tenant);
      const last = this.#last.get(tenant) ?? 0;
      const delta = value >= last ? value - last : value;
      this.#last.set(tenant, value);
      this.#totals.set(label, (this.#totals.get(label) ?? 0) + delta);
    }
    for (const tenant of this.#last.keys()) if (!seen.has(tenant)) this.#last.delete(tenant);
    return this.#totals;
  }
}

export interface TenantMetricsSources {
  scheduler?: FairScheduler;
  budget?: TenantBudget;
  weightOf: (tenant: string) => number;
  maxLabelledTenants?: number;
}

/** Registers the tenant metrics, read from `sources` at each scrape; returns the per-Loop API wait histogram. */
export function registerTenantMetrics(registry: Registry, sources: TenantMetricsSources) {
  const labels = tenantLabels(sources.maxLabelledTenants);
  const throttled = new MonotonicSums();
  const apiThrottled = new MonotonicSums();
  const started = new MonotonicSums();
  new Gauge({
    name: 'kubeloop_router_calls_in_flight_limit',
    help: 'The router-wide cap on function calls in flight (--max-calls-in-flight); 0 when off',
    registers: [registry],
    collect() {
      this.set(sources.scheduler && Number.isFinite(sources.scheduler.capacity) ? sources.scheduler.capacity : 0);
    },
  });
  new Gauge<'tenant'>({
    name: 'kubeloop_tenant_calls_in_flight',
    help: 'Function calls in flight per tenant (namespace of a Loop; cluster for ClusterLoops; other past the labelled tenants)',
    labelNames: ['tenant'],
    registers: [registry],
    collect() {
      this.reset();
      const sums = new Map<string, number>();
      for (const share of sources.scheduler?.shares() ?? []) sums.set(labels.of(share.tenant), (sums.get(labels.of(share.tenant)) ?? 0) + share.inFlight);
      for (const [tenant, value] of sums) this.set({ tenant }, value);
    },
  });
  new Gauge<'tenant'>({
    name: 'kubeloop_tenant_weight',
    help: 'Each labelled tenant\'s weight in the fair shares (--tenant-weights, Namespace label kubeloop.dev/tenant-weight)',
    labelNames: ['tenant'],
    registers: [registry],
    collect() {
      this.reset();
      for (const share of sources.scheduler?.shares() ?? []) {
        const label = labels.of(share.tenant);
        if (label !== OTHER_LABEL) this.set({ tenant: label }, sources.weightOf(share.tenant));
      }
    },
  });
  new Counter<'tenant'>({
    name: 'kubeloop_tenant_calls_started_total',
    help: 'Function calls started per tenant under the router-wide cap',
    labelNames: ['tenant'],
    registers: [registry],
    collect() {
      this.reset();
      const shares = sources.scheduler?.shares() ?? [];
      for (const [tenant, value] of started.update(shares.map((s) => ({ tenant: s.tenant, label: labels.of(s.tenant), value: s.started })))) this.inc({ tenant }, value);
    },
  });
  new Counter<'tenant' | 'budget'>({
    name: 'kubeloop_tenant_throttled_seconds_total',
    help: 'Seconds a tenant had work ready but waited: budget="calls" for a call slot (its fair share of --max-calls-in-flight), budget="api" for an API token (its share of --fair-api-qps)',
    labelNames: ['tenant', 'budget'],
    registers: [registry],
    collect() {
      this.reset();
      const calls = sources.scheduler?.shares() ?? [];
      for (const [tenant, ms] of throttled.update(calls.map((s) => ({ tenant: s.tenant, label: labels.of(s.tenant), value: s.throttledMs })))) this.inc({ tenant, budget: 'calls' }, ms / 1000);
      const api = sources.budget?.shares() ?? [];
      for (const [tenant, ms] of apiThrottled.update(api.map((s) => ({ tenant: s.tenant, label: labels.of(s.tenant), value: s.throttledMs })))) this.inc({ tenant, budget: 'api' }, ms / 1000);
    },
  });
  return new Histogram<'loop'>({
    name: 'kubeloop_loop_api_wait_seconds',
    help: 'How long a Loop\'s API request waited for a token (its per-Loop cap and its tenant\'s share of the shared budget); requests that did not wait are not observed',
    labelNames: ['loop'],
    buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
}
