// What a namespaced AdmissionHook's rules may match (docs/security.md, "Tenant bounds"): the one table of
// resources no namespaced hook may see (quota, limits, endpoints: a mutating hook there is a write primitive
// beyond its author's RBAC, CVE-2021-25740), no status subresource, no wildcards in a mutating hook's rules,
// and the update/patch checks each mutating rule needs of the author and the hook's ServiceAccount. Pure.
import type { HookRule } from '../../api/admission-hook.ts';
import type { AccessCheck } from '../../lib/kube/access-review.ts';

/**
 * The longest a namespaced hook may keep the API server waiting (default of --namespaced-hook-max-timeout-seconds,
 * chart webhook.namespacedHooks.maxTimeoutSeconds): a shared controller's worker waits that long at most.
 */
export const DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS = 3;

/** Never matched by a namespaced hook (the chart's hook policy holds the same list; test/e2e/admission-policy-table.test.ts checks it). */
export const NEVER_FOR_NAMESPACED_HOOKS: ReadonlyArray<{ group: string; resource: string; why: string }> = [
  { group: '', resource: 'resourcequotas', why: 'a hook zeroing status.used defeats the namespace quota' },
  { group: '', resource: 'limitranges', why: 'a hook there rewrites the namespace limits an admin set' },
  { group: '', resource: 'endpoints', why: 'a hook there points a Service at another namespace\'s pods (CVE-2021-25740)' },
  { group: 'discovery.k8s.io', resource: 'endpointslices', why: 'a hook there points a Service at another namespace\'s pods (CVE-2021-25740)' },
];

/** The subresource no namespaced hook may match on any resource: what controllers write and others trust. */
export const NEVER_SUBRESOURCE = 'status';

const split = (resource: string): [string, string | undefined] => {
  const [main = '', sub] = resource.split('/', 2);
  return [main, sub];
};

/**
 * Why each rule reaches too far for a namespaced hook: a never-listed resource (also through "*"), a status
 * subresource (also through "x/*" and "*\/*"), and for a mutating hook any wildcard in apiGroups or resources.
 */
export function namespacedRuleProblems(rules: readonly HookRule[], type: 'mutating' | 'validating'): string[] {
  const problems: string[] = [];
  rules.forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (type === 'mutating') {
      const wildGroup = rule.apiGroups.find((g) => g.includes('*'));
      const wildResource = rule.resources.find((r) => r.includes('*'));
      if (wildGroup !== undefined || wildResource !== undefined) {
        problems.push(`${at}: ${wildGroup !== undefined ? `apiGroup "${wildGroup}"` : `resource "${wildResource}"`} is a wildcard; a namespaced mutating hook names each group and resource it changes (each is checked against its author's and ServiceAccount's RBAC)`);
        return;
      }
    }
    for (const resource of rule.resources) {
      const [main, sub] = split(resource);
      if (sub === NEVER_SUBRESOURCE || sub === '*') {
        problems.push(`${at}: resource "${resource}" reaches a status subresource, which a namespaced hook may never match (controllers write status and others trust it)`);
        break;
      }
      if (sub !== undefined) continue;
      const never = NEVER_FOR_NAMESPACED_HOOKS.find((n) => (main === '*' || main === n.resource) && rule.apiGroups.some((g) => g === '*' || g === n.group));
      if (never) {
        problems.push(`${at}: resource "${resource}" reaches ${never.group ? `${never.resource}.${never.group}` : never.resource}, which a namespaced hook may never match: ${never.why}`);
        break;
      }
    }
  });
  return problems;
}

/** An update/patch check: AccessCheck with the subresource the rule names. */
export type WriteCheck = AccessCheck & { verb: 'update' | 'patch' };

/**
 * The checks a namespaced mutating hook's ServiceAccount (and, in the chart's policy, its author) must pass:
 * update and patch on every group, resource and subresource its rules name, in its namespace. Validating
 * hooks change nothing and need none. Called after namespacedRuleProblems, so no wildcard is left.
 */
export function mutatingWriteChecks(rules: readonly HookRule[], namespace: string): WriteCheck[] {
  const checks = new Map<string, WriteCheck>();
  for (const rule of rules) {
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const [main, sub] = split(resource);
        for (const verb of ['update', 'patch'] as const) {
          checks.set(`${verb} ${group}/${resource}`, { verb, group, resource: main, ...(sub ? { subresource: sub } : {}), namespace });
        }
      }
    }
  }
  return [...checks.values()];
}
