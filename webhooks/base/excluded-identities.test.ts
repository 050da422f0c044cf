// The identities kept out of namespaced hooks: parsing --hook-exclude-identities and the matchCondition built from it.
import { describe, expect, it } from 'vitest';
import { DEFAULT_EXCLUDED_IDENTITIES, EXCLUDED_IDENTITIES_CONDITION, excludedIdentitiesCondition, namespacedConditionsProblem, parseExcludedIdentities } from './excluded-identities.ts';

describe('parseExcludedIdentities', () => {
  it('reads users, prefixes and groups', () => {
    expect(parseExcludedIdentities([...DEFAULT_EXCLUDED_IDENTITIES, ' system:serviceaccount:kubeloop-system:kubeloop-router ', ''], '--x')).toEqual({
      users: ['system:kube-controller-manager', 'system:kube-scheduler', 'system:serviceaccount:kubeloop-system:kubeloop-router'],
      prefixes: ['system:serviceaccount:kube-system:'],
      groups: ['system:nodes'],
    });
  });

  it('refuses what would not be a plain name inside CEL, naming the setting', () => {
    expect(() => parseExcludedIdentities(["x' || true || '"], '--hook-exclude-identities')).toThrow(/--hook-exclude-identities: "x' \|\| true \|\| '" is not a user name/);
    expect(() => parseExcludedIdentities(['group:'], 'S')).toThrow(/S: "group:"/);
  });
});

describe('excludedIdentitiesCondition', () => {
  it('is one condition sending a request on only when no listed identity made it', () => {
    expect(excludedIdentitiesCondition(parseExcludedIdentities(DEFAULT_EXCLUDED_IDENTITIES, 's'))).toEqual({
      name: EXCLUDED_IDENTITIES_CONDITION,
      expression:
        "!(request.userInfo.username in ['system:kube-controller-manager', 'system:kube-scheduler'] || ['system:serviceaccount:kube-system:'].exists(p, request.userInfo.username.startsWith(p)) || (has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ['system:nodes'])))",
    });
  });

  it('is none for an empty list', () => {
    expect(excludedIdentitiesCondition(parseExcludedIdentities([], 's'))).toBeUndefined();
  });
});

describe('namespacedConditionsProblem', () => {
  it("leaves room for the gateway's condition and keeps its name", () => {
    const conditions = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, expression: 'true' }));
    expect(namespacedConditionsProblem(conditions(63))).toBeUndefined();
    expect(namespacedConditionsProblem(conditions(64))).toBe(`matchConditions: a namespaced AdmissionHook has at most 63 (the gateway adds ${EXCLUDED_IDENTITIES_CONDITION})`);
    expect(namespacedConditionsProblem([{ name: EXCLUDED_IDENTITIES_CONDITION, expression: 'true' }])).toContain("is the gateway's own");
  });
});
