// The most AdmissionHooks the gateway serves per tenant (namespace), with or without a ResourceQuota: past
// it, the newest hooks are left out (Ready=False, TenantLimitExceeded), the oldest served first, so a team cannot
// grow the shared webhook configuration until it breaks. ClusterAdmissionHooks are not counted. Pure; the
// arithmetic is the router's Loop limit's too (lib/kube/oldest-per-namespace.ts).
import type { AdmissionHook } from '../../api/admission-hook.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';
import { beyondOldestPerNamespace } from '../../lib/kube/oldest-per-namespace.ts';
import { timestampOf } from '../../lib/kube/meta-time.ts';

/** Default of --tenant-max-hooks (chart webhook.tenantMaxHooks). */
export const DEFAULT_TENANT_MAX_HOOKS = 20;
export const TENANT_HOOK_LIMIT_REASON = 'TenantLimitExceeded';

/** creationTimestamp as RFC 3339 (the cache holds parsed JSON: a string, whatever the model type says). */
export function createdAt(hook: AdmissionHook | undefined): string | undefined {
  return timestampOf(hook?.metadata?.creationTimestamp);
}

/** The namespaced hooks over their namespace's limit, by id, each with the message its condition carries. */
export function hooksOverTenantLimit(hooks: Iterable<ResolvedHook>, maxPerTenant: number, createdOf: (hook: ResolvedHook) => string | undefined): Map<string, string> {
  const namespaces = new Map<string, string | undefined>();
  const ages = [...hooks].map((hook) => {
    namespaces.set(hook.id, hook.namespace);
    return { id: hook.id, namespace: hook.namespace, created: createdOf(hook) };
  });
  const over = new Map<string, string>();
  // Oldest first (lib/kube/oldest-per-namespace.ts): a new hook never displaces a serving one.
  for (const [id, { total }] of beyondOldestPerNamespace(ages, maxPerTenant)) {
    const namespace = namespaces.get(id);
    over.set(id, `namespace ${namespace} has ${total} AdmissionHooks the gateway could serve; it serves the ${maxPerTenant} oldest (--tenant-max-hooks) and not this one: delete one of the others or ask the operator to raise the limit`);
  }
  return over;
}
