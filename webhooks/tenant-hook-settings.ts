// The gateway's bounds on what tenants' hooks may cost everyone (docs/security.md, "Tenant bounds"): the
// namespaced hooks' timeout cap, the identities kept out of namespaced entries, the hooks served per tenant and
// the per-hook circuit breaker. Flags, variables and defaults in one place; config.ts spreads them in.
import { pickSetting, settingInteger, type FlagValues } from '../lib/config/settings.ts';
import { DEFAULT_BREAKER_COOL_DOWN_SECONDS, DEFAULT_BREAKER_THRESHOLD } from './gateway/circuit-breaker.ts';
import { DEFAULT_EXCLUDED_IDENTITIES, parseExcludedIdentities, type ExcludedIdentities } from './base/excluded-identities.ts';
import { DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS } from './base/namespaced-hook-rules.ts';
import { DEFAULT_TENANT_MAX_HOOKS } from './lifecycle/tenant-hook-limit.ts';

export interface TenantHookSettings {
  /** The longest timeoutSeconds a namespaced AdmissionHook may ask for (its default when below 5). */
  namespacedMaxTimeoutSeconds: number;
  /** Whose requests never reach namespaced hooks (a matchCondition on each namespaced entry). */
  excludedIdentities: ExcludedIdentities;
  /** AdmissionHooks served per namespace, oldest first; 0: no limit. */
  tenantMaxHooks: number;
  /** Consecutive failures that open a hook's circuit breaker; 0: no breaker. */
  breakerThreshold: number;
  breakerCoolDownSeconds: number;
}

export const TENANT_HOOK_FLAG_OPTIONS = {
  'namespaced-hook-max-timeout-seconds': { type: 'string' },
  'hook-exclude-identities': { type: 'string' },
  'tenant-max-hooks': { type: 'string' },
  'hook-breaker-failures': { type: 'string' },
  'hook-breaker-cool-down-seconds': { type: 'string' },
} as const;

export const TENANT_HOOK_USAGE = `  --namespaced-hook-max-timeout-seconds ${DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS}  the longest timeoutSeconds of a namespaced AdmissionHook (KUBELOOP_NAMESPACED_HOOK_MAX_TIMEOUT_SECONDS)
  --hook-exclude-identities LIST    users ("name", "prefix*", "group:name") never sent to namespaced hooks, "" for none
                                   (KUBELOOP_HOOK_EXCLUDE_IDENTITIES; default ${DEFAULT_EXCLUDED_IDENTITIES.join(',')})
  --tenant-max-hooks ${DEFAULT_TENANT_MAX_HOOKS}             AdmissionHooks served per namespace, oldest first; 0 for no limit (KUBELOOP_TENANT_MAX_HOOKS)
  --hook-breaker-failures ${DEFAULT_BREAKER_THRESHOLD}         consecutive failed calls that open a hook's circuit breaker; 0 for none (KUBELOOP_HOOK_BREAKER_FAILURES)
  --hook-breaker-cool-down-seconds ${DEFAULT_BREAKER_COOL_DOWN_SECONDS}  how long an open breaker answers by the failurePolicy before a probe call (KUBELOOP_HOOK_BREAKER_COOL_DOWN_SECONDS)`;

export function readTenantHookSettings(values: FlagValues, env: NodeJS.ProcessEnv): TenantHookSettings {
  const pick = (flag: keyof typeof TENANT_HOOK_FLAG_OPTIONS, variable: string) => pickSetting(values, env, flag, variable);
  // An empty flag (--hook-exclude-identities "") means none; an unset one the defaults.
  const identities = pick('hook-exclude-identities', 'KUBELOOP_HOOK_EXCLUDE_IDENTITIES');
  return {
    namespacedMaxTimeoutSeconds: settingInteger(pick('namespaced-hook-max-timeout-seconds', 'KUBELOOP_NAMESPACED_HOOK_MAX_TIMEOUT_SECONDS'), DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS, 1, 30),
    excludedIdentities: parseExcludedIdentities(identities ? identities.value.split(',') : DEFAULT_EXCLUDED_IDENTITIES, identities?.setting ?? '--hook-exclude-identities'),
    tenantMaxHooks: settingInteger(pick('tenant-max-hooks', 'KUBELOOP_TENANT_MAX_HOOKS'), DEFAULT_TENANT_MAX_HOOKS, 0, 100_000),
    breakerThreshold: settingInteger(pick('hook-breaker-failures', 'KUBELOOP_HOOK_BREAKER_FAILURES'), DEFAULT_BREAKER_THRESHOLD, 0, 1000),
    breakerCoolDownSeconds: settingInteger(pick('hook-breaker-cool-down-seconds', 'KUBELOOP_HOOK_BREAKER_COOL_DOWN_SECONDS'), DEFAULT_BREAKER_COOL_DOWN_SECONDS, 1, 3600),
  };
}
