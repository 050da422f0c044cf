// The namespaced hooks' rule table, case by case: what a team's hook may never match, and the write checks.
import { describe, expect, it } from 'vitest';
import type { HookRule } from '../../api/admission-hook.ts';
import { mutatingWriteChecks, namespacedRuleProblems, NEVER_FOR_NAMESPACED_HOOKS } from './namespaced-hook-rules.ts';

const rule = (apiGroups: string[], resources: string[]): HookRule => ({ operations: ['UPDATE'], apiGroups, apiVersions: ['*'], resources });

describe('namespacedRuleProblems', () => {
  it.each([
    ['resourcequotas/status (the quota defeated)', rule([''], ['resourcequotas/status']), 'status subresource'],
    ['resourcequotas', rule([''], ['resourcequotas']), 'reaches resourcequotas'],
    ['limitranges', rule([''], ['limitranges']), 'reaches limitranges'],
    ['endpoints', rule([''], ['endpoints']), 'CVE-2021-25740'],
    ['endpointslices (CVE-2021-25740)', rule(['discovery.k8s.io'], ['endpointslices']), 'reaches endpointslices.discovery.k8s.io'],
    ['pods/status', rule([''], ['pods/status']), 'status subresource'],
    ['services/status', rule([''], ['services/status']), 'status subresource'],
    ['ingresses/status', rule(['networking.k8s.io'], ['ingresses/status']), 'status subresource'],
  ])('refuses %s for both types', (_, r, message) => {
    expect(namespacedRuleProblems([r], 'validating').join()).toContain(message);
    expect(namespacedRuleProblems([r], 'mutating').join()).toContain(message);
  });

  it('refuses a validating hook whose wildcard reaches a never-listed resource', () => {
    expect(namespacedRuleProblems([rule([''], ['*'])], 'validating').join()).toContain('reaches resourcequotas');
    expect(namespacedRuleProblems([rule(['*'], ['*'])], 'validating').join()).toContain('reaches resourcequotas');
    expect(namespacedRuleProblems([rule(['*'], ['*/*'])], 'validating').join()).toContain('status subresource');
    expect(namespacedRuleProblems([rule([''], ['pods/*'])], 'validating').join()).toContain('status subresource');
  });

  it('refuses any wildcard in a mutating hook, names each rule', () => {
    expect(namespacedRuleProblems([rule(['apps'], ['deployments']), rule(['apps'], ['*'])], 'mutating')).toEqual([expect.stringMatching(/^rules\[1\]: resource "\*" is a wildcard/)]);
    expect(namespacedRuleProblems([rule(['*'], ['pods'])], 'mutating').join()).toContain('apiGroup "*" is a wildcard');
  });

  it('allows what a team owns: pods, configmaps, deployments, their scale, a validating wildcard on apps', () => {
    expect(namespacedRuleProblems([rule([''], ['pods', 'configmaps']), rule(['apps'], ['deployments', 'deployments/scale'])], 'mutating')).toEqual([]);
    expect(namespacedRuleProblems([rule(['apps'], ['*'])], 'validating')).toEqual([]);
    expect(namespacedRuleProblems([rule(['example.com'], ['endpoints'])], 'validating')).toEqual([]);
  });

  it('covers every row of the table', () => {
    for (const never of NEVER_FOR_NAMESPACED_HOOKS) expect(namespacedRuleProblems([rule([never.group], [never.resource])], 'mutating')).toHaveLength(1);
  });
});

describe('mutatingWriteChecks', () => {
  it('asks update and patch for each group, resource and subresource, in the namespace, once each', () => {
    expect(mutatingWriteChecks([rule(['', 'apps'], ['pods']), rule(['apps'], ['deployments/scale', 'pods'])], 'team-a')).toEqual([
      { verb: 'update', group: '', resource: 'pods', namespace: 'team-a' },
      { verb: 'patch', group: '', resource: 'pods', namespace: 'team-a' },
      { verb: 'update', group: 'apps', resource: 'pods', namespace: 'team-a' },
      { verb: 'patch', group: 'apps', resource: 'pods', namespace: 'team-a' },
      { verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'team-a' },
      { verb: 'patch', group: 'apps', resource: 'deployments', subresource: 'scale', namespace: 'team-a' },
    ]);
  });
});
