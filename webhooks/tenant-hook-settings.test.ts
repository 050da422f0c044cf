// The tenant bounds' settings: defaults, flags over variables, an empty identity list, bad values named.
import { describe, expect, it } from 'vitest';
import { readWebhookConfig } from './config.ts';

describe('the tenant hook settings of kubeloop webhook', () => {
  it('default to 3 s, 20 hooks per namespace, a breaker after 5 failures for 30 s, shared controllers excluded', () => {
    expect(readWebhookConfig([], {}).tenantHooks).toEqual({
      namespacedMaxTimeoutSeconds: 3,
      tenantMaxHooks: 20,
      breakerThreshold: 5,
      breakerCoolDownSeconds: 30,
      excludedIdentities: { users: ['system:kube-controller-manager', 'system:kube-scheduler'], prefixes: ['system:serviceaccount:kube-system:'], groups: ['system:nodes'] },
    });
  });

  it('takes flags over variables; an empty identity flag excludes nobody', () => {
    const env = { KUBELOOP_TENANT_MAX_HOOKS: '7', KUBELOOP_NAMESPACED_HOOK_MAX_TIMEOUT_SECONDS: '5' };
    const config = readWebhookConfig(['--tenant-max-hooks', '0', '--hook-exclude-identities', '', '--hook-breaker-failures', '0'], env).tenantHooks;
    expect(config).toMatchObject({ tenantMaxHooks: 0, namespacedMaxTimeoutSeconds: 5, breakerThreshold: 0, excludedIdentities: { users: [], prefixes: [], groups: [] } });
  });

  it('names the bad setting', () => {
    expect(() => readWebhookConfig(['--namespaced-hook-max-timeout-seconds', '31'], {})).toThrow('--namespaced-hook-max-timeout-seconds: "31" is not an integer between 1 and 30');
    expect(() => readWebhookConfig([], { KUBELOOP_HOOK_EXCLUDE_IDENTITIES: 'a b' })).toThrow('KUBELOOP_HOOK_EXCLUDE_IDENTITIES: "a b" is not a user name');
  });
});
