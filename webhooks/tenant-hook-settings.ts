// The gateway's bounds on what tenants' hooks may cost everyone (docs/security.md, "Tenant bounds"): the
// namespaced hooks' timeout cap, the identities kept out of namespaced entries, the hooks served per tenant and
// the per-hook circuit breaker, read from their entries of the flag table (webhook-flags.ts) for config.ts.
import type { FlagValues } from '../lib/config/settings.ts';
import { parseExcludedIdentities, type ExcludedIdentities } from './base/excluded-identities.ts';
import { integerFlag, pickFlag, textFlag } from './webhook-flags.ts';

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

export function readTenantHookSettings(values: FlagValues, env: NodeJS.ProcessEnv): TenantHookSettings {
  // An empty flag (--hook-exclude-identities "") means none; an unset one the defaults.
  const identities = pickFlag(values, env, 'hook-exclude-identities');
  return {
    namespacedMaxTimeoutSeconds: integerFlag(values, env, 'namespaced-hook-max-timeout-seconds'),
    excludedIdentities: parseExcludedIdentities(textFlag(values, env, 'hook-exclude-identities').split(','), identities?.setting ?? '--hook-exclude-identities'),
    tenantMaxHooks: integerFlag(values, env, 'tenant-max-hooks'),
    breakerThreshold: integerFlag(values, env, 'hook-breaker-failures'),
    breakerCoolDownSeconds: integerFlag(values, env, 'hook-breaker-cool-down-seconds'),
  };
}
