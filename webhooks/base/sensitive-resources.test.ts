import { describe, expect, it } from 'vitest';
import type { HookRule } from '../../api/admission-hook.ts';
import { parseSensitiveCategories, sensitiveRuleProblems } from './sensitive-resources.ts';

const rule = (apiGroups: string[], resources: string[]): HookRule => ({ operations: ['CREATE'], apiGroups, apiVersions: ['*'], resources });

describe('sensitiveRuleProblems', () => {
  it.each([
    [[''], ['secrets'], 'secrets'],
    [[''], ['*'], 'secrets'],
    [['*'], ['*'], 'secrets'],
    [[''], ['serviceaccounts/token'], 'serviceaccount-tokens'],
    [[''], ['*/*'], 'serviceaccount-tokens'],
    [[''], ['nodes/status'], 'nodes'],
    [['rbac.authorization.k8s.io'], ['clusterrolebindings'], 'rbac'],
    [['apiextensions.k8s.io'], ['customresourcedefinitions'], 'crds'],
    [['authorization.k8s.io'], ['subjectaccessreviews'], 'reviews'],
    [['authentication.k8s.io'], ['tokenreviews'], 'reviews'],
  ])('refuses apiGroups %j resources %j (%s)', (groups, resources, category) => {
    const problems = sensitiveRuleProblems([rule(groups, resources)], []);
    expect(problems.join('\n')).toContain(`reaches ${category}`);
    expect(sensitiveRuleProblems([rule(groups, resources)], ['secrets', 'serviceaccount-tokens', 'nodes', 'rbac', 'crds', 'reviews'])).toEqual([]);
  });
  it('passes ordinary resources, and serviceaccounts without their token', () => {
    expect(sensitiveRuleProblems([rule([''], ['pods', 'configmaps', 'serviceaccounts']), rule(['apps'], ['deployments', 'deployments/scale'])], [])).toEqual([]);
  });
  it('allows only the categories named', () => {
    const problems = sensitiveRuleProblems([rule([''], ['*'])], ['secrets']);
    expect(problems.join('\n')).not.toContain('reaches secrets');
    expect(problems.join('\n')).toContain('reaches nodes');
  });
});

describe('parseSensitiveCategories', () => {
  it('reads a list and names a bad entry', () => {
    expect(parseSensitiveCategories('secrets, rbac', '--hook-allow-resources')).toEqual(['secrets', 'rbac']);
    expect(() => parseSensitiveCategories('secret', '--hook-allow-resources')).toThrow('--hook-allow-resources: "secret" is not one of secrets,');
  });
});
