// The identities whose requests never reach a namespaced AdmissionHook: shared controllers (kube-system's
// ServiceAccounts, the controller manager, the scheduler, nodes) and kubeloop's own router and gateway, whose
// workers serve every namespace, so one team's slow hook cannot hold them (docs/security.md, "Tenant bounds").
// Parsed from --hook-exclude-identities; becomes one matchCondition on each namespaced webhook entry. Pure.
import type { HookMatchCondition } from '../../api/admission-hook.ts';

/** The defaults of --hook-exclude-identities (the chart adds its router's and gateway's ServiceAccounts). */
export const DEFAULT_EXCLUDED_IDENTITIES: readonly string[] = [
  'system:serviceaccount:kube-system:*',
  'system:kube-controller-manager',
  'system:kube-scheduler',
  'group:system:nodes',
];

/** The matchCondition's name: a qualified name of ours, so it never collides with a hook's own conditions. */
export const EXCLUDED_IDENTITIES_CONDITION = 'kubeloop.dev/not-a-shared-controller';

export interface ExcludedIdentities {
  users: string[];
  /** Username prefixes ("system:serviceaccount:kube-system:" from "system:serviceaccount:kube-system:*"). */
  prefixes: string[];
  groups: string[];
}

const IDENTITY = /^[A-Za-z0-9:._@-]+$/;

/** "user", "prefix*" or "group:name", comma-separated; an entry with other characters is refused (it goes into CEL). */
export function parseExcludedIdentities(entries: readonly string[], setting: string): ExcludedIdentities {
  const parsed: ExcludedIdentities = { users: [], prefixes: [], groups: [] };
  for (const raw of entries.map((e) => e.trim()).filter((e) => e !== '')) {
    const group = raw.startsWith('group:') ? raw.slice('group:'.length) : undefined;
    const value = group ?? (raw.endsWith('*') ? raw.slice(0, -1) : raw);
    if (!IDENTITY.test(value)) throw new Error(`${setting}: "${raw}" is not a user name, "prefix*" or "group:name" (letters, digits and : . _ @ - only)`);
    if (group !== undefined) parsed.groups.push(value);
    else if (raw.endsWith('*')) parsed.prefixes.push(value);
    else parsed.users.push(value);
  }
  return parsed;
}

const list = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/** The matchCondition sending a request on only when none of the identities made it; undefined when the list is empty. */
export function excludedIdentitiesCondition(identities: ExcludedIdentities): HookMatchCondition | undefined {
  const terms = [
    ...(identities.users.length ? [`request.userInfo.username in ${list(identities.users)}`] : []),
    ...(identities.prefixes.length ? [`${list(identities.prefixes)}.exists(p, request.userInfo.username.startsWith(p))`] : []),
    ...(identities.groups.length ? [`(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ${list(identities.groups)}))`] : []),
  ];
  if (terms.length === 0) return undefined;
  return { name: EXCLUDED_IDENTITIES_CONDITION, expression: `!(${terms.join(' || ')})` };
}

/** The API server's limit on a webhook's matchConditions, one of which the gateway adds to a namespaced hook's. */
const MAX_MATCH_CONDITIONS = 64;

/** Why a namespaced hook's own matchConditions leave no room for the gateway's, or undefined. */
export function namespacedConditionsProblem(conditions: readonly HookMatchCondition[] | undefined): string | undefined {
  const own = conditions ?? [];
  if (own.some((c) => c.name === EXCLUDED_IDENTITIES_CONDITION)) return `matchConditions: the name ${EXCLUDED_IDENTITIES_CONDITION} is the gateway's own`;
  if (own.length >= MAX_MATCH_CONDITIONS) return `matchConditions: a namespaced AdmissionHook has at most ${MAX_MATCH_CONDITIONS - 1} (the gateway adds ${EXCLUDED_IDENTITIES_CONDITION})`;
  return undefined;
}
