// Who a Loop's work is charged to (its tenant) and what that tenant weighs in the router's fair shares:
// the namespace of a namespaced Loop, CLUSTER_TENANT (`_cluster`) for every ClusterLoop (docs/router.md#fairness-across-tenants).
import { tenantOfNamespace } from '../../api/tenant.ts';
import type { LoopConfig } from './loop-spec.ts';

/** The label on a Namespace that sets its tenant's weight. */
export const TENANT_WEIGHT_LABEL = 'kubeloop.dev/tenant-weight';
export const DEFAULT_TENANT_WEIGHT = 1;
/** Weights are clamped here, so one tenant cannot claim a share that rounds every other one to nothing. */
export const MAX_TENANT_WEIGHT = 1000;
export const MIN_TENANT_WEIGHT = 0.01;

export function tenantOf(loop: Pick<LoopConfig, 'namespace'>): string {
  return tenantOfNamespace(loop.namespace);
}

/** The tenant of a Loop by identity (`<namespace>/<name>` or a ClusterLoop's `<name>`): namespace names hold no '/'. */
export function tenantOfLoopId(id: string): string {
  const slash = id.indexOf('/');
  return tenantOfNamespace(slash < 0 ? undefined : id.slice(0, slash));
}

/** A weight from a label or a flag; undefined when it is not a positive number (the caller falls back and says so). */
export function parseTenantWeight(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const weight = Number(value);
  if (!Number.isFinite(weight) || weight <= 0) return undefined;
  return Math.min(MAX_TENANT_WEIGHT, Math.max(MIN_TENANT_WEIGHT, weight));
}

/**
 * `team-a=4,team-b=0.5` (the --tenant-weights flag, the chart's fairness.weights map); throws naming the bad
 * entry, so a typo stops the router at start-up instead of silently weighing 1.
 */
export function parseTenantWeights(spec: string | undefined): Map<string, number> {
  const weights = new Map<string, number>();
  for (const entry of (spec ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const at = entry.lastIndexOf('=');
    const tenant = at > 0 ? entry.slice(0, at).trim() : '';
    const weight = parseTenantWeight(at > 0 ? entry.slice(at + 1) : undefined);
    if (!tenant || weight === undefined) throw new Error(`tenant weight "${entry}" must be <namespace>=<positive number>`);
    weights.set(tenant, weight);
  }
  return weights;
}

/**
 * The weights in force: the flag's map wins over a Namespace label (the operator's word over the namespace
 * admin's, who may label their own namespace only if granted patch on Namespaces), then the default.
 */
export class TenantWeights {
  readonly #configured: Map<string, number>;
  readonly #labelled = new Map<string, number>();

  constructor(configured: Map<string, number> = new Map()) {
    this.#configured = configured;
  }

  weightOf(tenant: string): number {
    return this.#configured.get(tenant) ?? this.#labelled.get(tenant) ?? DEFAULT_TENANT_WEIGHT;
  }

  /** A Namespace's label seen (or gone: undefined). */
  setLabel(namespace: string, value: string | undefined): void {
    const weight = parseTenantWeight(value);
    if (weight === undefined) this.#labelled.delete(namespace);
    else this.#labelled.set(namespace, weight);
  }
}
