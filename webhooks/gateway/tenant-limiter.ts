// The gateway's cap on admission calls in flight per tenant (an AdmissionHook's namespace; every
// ClusterAdmissionHook is the one tenant CLUSTER_TENANT, `_cluster`), so one team's slow function or burst cannot take every
// socket and every event-loop turn from the others' hooks. Over the cap the hook's failurePolicy applies.
import type { ResolvedHook } from '../base/hook-spec.ts';

import { tenantOfNamespace } from '../../api/tenant.ts';
/** Default of --tenant-max-in-flight: far above one team's steady need, far below what starves the gateway. */
export const DEFAULT_TENANT_MAX_IN_FLIGHT = 64;

/** The hook's tenant, as every shared budget names it (api/tenant.ts): its namespace, or `_cluster`. */
export const tenantKey = (hook: ResolvedHook): string => tenantOfNamespace(hook.namespace);

export class TenantLimiter {
  readonly #inFlight = new Map<string, number>();

  constructor(readonly maxInFlight: number) {}

  /** Takes a slot for the tenant; false when it already has maxInFlight calls running. */
  tryAcquire(tenant: string): boolean {
    const running = this.#inFlight.get(tenant) ?? 0;
    if (running >= this.maxInFlight) return false;
    this.#inFlight.set(tenant, running + 1);
    return true;
  }

  release(tenant: string): void {
    const running = (this.#inFlight.get(tenant) ?? 0) - 1;
    if (running > 0) this.#inFlight.set(tenant, running);
    else this.#inFlight.delete(tenant);
  }

  inFlight(tenant: string): number {
    return this.#inFlight.get(tenant) ?? 0;
  }
}
