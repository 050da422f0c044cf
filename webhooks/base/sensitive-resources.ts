// Resources whose admission reviews carry credentials or grant power (Secrets, tokens, nodes, RBAC, CRDs,
// the *reviews that carry tokens and identities): a hook whose rules reach them is refused unless an operator
// allowed the category (--hook-allow-resources; the chart's admissionHooks.allowResources and its policy).
import type { HookRule } from '../../api/admission-hook.ts';

export const SENSITIVE_CATEGORIES = ['secrets', 'serviceaccount-tokens', 'nodes', 'rbac', 'crds', 'reviews'] as const;
export type SensitiveCategory = (typeof SENSITIVE_CATEGORIES)[number];

interface Sensitive {
  category: SensitiveCategory;
  /** The API group; undefined: any. */
  group?: string;
  /** Whether the rule's resource (main part and subresource, '*' as webhooks read it) reaches this category. */
  reaches(main: string, sub: string | undefined): boolean;
}

// In webhook rules "*" is every resource but no subresource, "x/*" every subresource of x, "*/*" all of them.
const SENSITIVE: readonly Sensitive[] = [
  { category: 'secrets', group: '', reaches: (main) => main === 'secrets' || main === '*' },
  { category: 'serviceaccount-tokens', group: '', reaches: (main, sub) => (main === 'serviceaccounts' || main === '*') && (sub === 'token' || sub === '*') },
  { category: 'nodes', group: '', reaches: (main) => main === 'nodes' || main === '*' },
  { category: 'rbac', group: 'rbac.authorization.k8s.io', reaches: () => true },
  { category: 'crds', group: 'apiextensions.k8s.io', reaches: (main) => main === 'customresourcedefinitions' || main === '*' },
  { category: 'reviews', reaches: (main) => main === '*' || main.endsWith('reviews') },
];

/** "rules[0]: resource \"secrets\" reaches secrets" for each category a rule reaches that is not allowed. */
export function sensitiveRuleProblems(rules: readonly HookRule[], allowed: readonly SensitiveCategory[]): string[] {
  const problems: string[] = [];
  rules.forEach((rule, i) => {
    const hit = new Set<SensitiveCategory>();
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const [main = '', sub] = resource.split('/', 2);
        for (const s of SENSITIVE) {
          if (allowed.includes(s.category) || hit.has(s.category)) continue;
          if ((s.group === undefined || group === '*' || group === s.group) && s.reaches(main, sub)) {
            hit.add(s.category);
            problems.push(`rules[${i}]: apiGroup "${group}" resource "${resource}" reaches ${s.category}, which hooks may not intercept unless the operator allows it (--hook-allow-resources ${s.category})`);
          }
        }
      }
    }
  });
  return problems;
}

/** Parses --hook-allow-resources: a comma-separated list of categories. */
export function parseSensitiveCategories(value: string, setting: string): SensitiveCategory[] {
  const names = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  for (const name of names) {
    if (!(SENSITIVE_CATEGORIES as readonly string[]).includes(name)) throw new Error(`${setting}: "${name}" is not one of ${SENSITIVE_CATEGORIES.join(', ')}`);
  }
  return names as SensitiveCategory[];
}
