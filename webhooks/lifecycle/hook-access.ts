// Who may receive which context objects: the gateway's cache is shared and read with its own identity, so
// before a hook is registered (and again periodically) SubjectAccessReviews ask whether the hook's
// ServiceAccount may get each context kind in each namespace the hook can read it from.
import type { HookContextEntry } from '../../api/admission-hook.ts';
import type { AccessCheck } from '../../lib/kube/access-review.ts';
import type { ResourceInfo } from '../../lib/kube/index.ts';

/** How often every hook is reviewed again by default while RBAC and the configurations are watched: a safety net. */
export const DEFAULT_HOOK_ACCESS_REVIEW_MS = 3_600_000;
/** ... and while they are not (the gateway may not watch them, or lost the read): then the timer alone sees a change. */
export const DEFAULT_UNWATCHED_HOOK_ACCESS_REVIEW_MS = 300_000;

/** The periodic review's default period (--access-review-seconds, when given, is the period either way). */
export function hookReviewPeriodMs(watched: boolean): number {
  return watched ? DEFAULT_HOOK_ACCESS_REVIEW_MS : DEFAULT_UNWATCHED_HOOK_ACCESS_REVIEW_MS;
}

/**
 * One get check per context entry: in its fixed namespace, or cluster-wide for "Same" (the hook admits
 * objects of any namespace it matches, so it may read the kind in each) and for cluster-scoped kinds.
 */
export function contextAccessChecks(entries: readonly HookContextEntry[], resourceOf: (entry: HookContextEntry) => ResourceInfo): AccessCheck[] {
  const checks = new Map<string, AccessCheck>();
  for (const entry of entries) {
    const resource = resourceOf(entry);
    const fixed = entry.namespace && entry.namespace !== 'Same' ? entry.namespace : undefined;
    const namespace = resource.namespaced ? fixed : undefined;
    checks.set(`${resource.group}/${resource.plural} ${namespace ?? ''}`, { verb: 'get', group: resource.group, resource: resource.plural, namespace });
  }
  return [...checks.values()];
}
