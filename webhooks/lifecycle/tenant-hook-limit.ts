// The most AdmissionHooks the gateway serves per tenant (namespace), with or without a ResourceQuota: past
// it, the newest hooks are left out (Ready=False, TenantLimitExceeded), the oldest served first, so a team cannot
// grow the shared webhook configuration until it breaks. ClusterAdmissionHooks are not counted. Pure.
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';

/** Default of --tenant-max-hooks (chart webhook.tenantMaxHooks). */
export const DEFAULT_TENANT_MAX_HOOKS = 20;
export const TENANT_HOOK_LIMIT_REASON = 'TenantLimitExceeded';

/** creationTimestamp as RFC 3339 (the cache holds parsed JSON: a string, whatever the model type says). */
export function createdAt(hook: AdmissionHook | undefined): string | undefined {
  const value: unknown = hook?.metadata?.creationTimestamp;
  return value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : undefined;
}

/** The namespaced hooks over their namespace's limit, by id, each with the message its condition carries. */
export function hooksOverTenantLimit(hooks: Iterable<ResolvedHook>, maxPerTenant: number, createdOf: (hook: ResolvedHook) => string | undefined): Map<string, string> {
  const byTenant = new Map<string, ResolvedHook[]>();
  for (const hook of hooks) {
    if (!hook.namespace) continue;
    byTenant.set(hook.namespace, [...(byTenant.get(hook.namespace) ?? []), hook]);
  }
  const over = new Map<string, string>();
  for (const [namespace, members] of byTenant) {
    if (members.length <= maxPerTenant) continue;
    // Oldest first (RFC 3339 UTC timestamps sort as strings), then by name: a new hook never displaces a serving one.
    members.sort((a, b) => (createdOf(a) ?? '').localeCompare(createdOf(b) ?? '') || a.name.localeCompare(b.name));
    for (const hook of members.slice(maxPerTenant)) {
      over.set(hook.id, `namespace ${namespace} has ${members.length} AdmissionHooks the gateway could serve; it serves the ${maxPerTenant} oldest (--tenant-max-hooks) and not this one: delete one of the others or ask the operator to raise the limit`);
    }
  }
  return over;
}
