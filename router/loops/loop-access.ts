// The access a Loop's ServiceAccount needs: list and watch of its primary and owned kinds in its namespaces,
// and of each spec.related kind where that entry looks (lib/kube/access-review.ts asks the API server); which
// Loops an RBAC change may concern (lib/kube/rbac-watch.ts tells the changes); and the order in which reviews ask
// again, spread across namespaces.
import type { KindRef } from '../../api/meta.ts';
import { accessChecks, type AccessCheck } from '../../lib/kube/access-review.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import type { RbacChanges } from '../../lib/kube/rbac-watch.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { relationWatchScope } from '../base/related-relation.ts';

/**
 * How often every running Loop's access is reviewed again when not told (--access-review-seconds) while the
 * router watches RBAC: a safety net under the reviews each RBAC change brings (a missed or compacted event).
 */
export const DEFAULT_ACCESS_REVIEW_MS = 60 * 60_000;
/** The period when not told and the router may not watch RBAC: only the timer notices a revoked right. */
export const DEFAULT_UNWATCHED_ACCESS_REVIEW_MS = 5 * 60_000;

/**
 * Every check a Loop needs: its primary and owned kinds in its namespaces, and each spec.related kind where
 * that entry looks (a named namespace, the Loop's namespaces, or all), so a related kind it may not read
 * stops the Loop before anything is sent.
 */
export async function loopAccessChecks(config: Pick<LoopConfig, 'for' | 'owns' | 'namespaces' | 'related'>, resolve: (ref: KindRef) => Promise<ResourceInfo>): Promise<AccessCheck[]> {
  const own = await Promise.all([config.for, ...config.owns].map(resolve));
  const checks = accessChecks(own, config.namespaces);
  for (const relation of config.related) {
    const resource = await resolve(relation.kind);
    for (const check of accessChecks([resource], relationWatchScope(relation, config.namespaces))) {
      if (!checks.some((c) => c.verb === check.verb && c.group === check.group && c.resource === check.resource && c.namespace === check.namespace)) checks.push(check);
    }
  }
  return checks;
}

/**
 * The namespaces a Loop's checks look in (loopAccessChecks, without asking discovery): where a Role or
 * RoleBinding may grant or revoke what it needs. A check cluster-wide is granted by ClusterRoleBindings only,
 * so it adds none; a cluster-scoped kind named with namespaces adds them needlessly, a harmless extra review.
 */
export function loopRbacNamespaces(config: Pick<LoopConfig, 'namespaces' | 'related'>): Set<string> {
  const namespaces = new Set(config.namespaces);
  for (const relation of config.related) for (const namespace of relationWatchScope(relation, config.namespaces) ?? []) namespaces.add(namespace);
  return namespaces;
}

/**
 * The Loops (by identity, each with loopRbacNamespaces) whose access the changes may alter, in reviewOrder: every
 * Loop for a ClusterRole (a RoleBinding anywhere may name it) or a ClusterRoleBinding; else those whose checks
 * look in a namespace whose Roles or RoleBindings changed.
 */
export function affectedLoops(changes: RbacChanges, loops: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const affected = [...loops].filter(([, namespaces]) => changes.cluster || [...namespaces].some((ns) => changes.namespaces.has(ns)));
  return reviewOrder(affected.map(([id]) => id));
}

/**
 * The periodic review's order: one Loop of each namespace in turn (ClusterLoops as one more group), so a tenant
 * with many Loops cannot hold back another tenant's review behind all of its own (a sweep is as fair as the
 * start bucket: every namespace's first Loop is reviewed before any namespace's second).
 */
export function reviewOrder(ids: readonly string[]): string[] {
  const byNamespace = new Map<string, string[]>();
  for (const id of ids) {
    const slash = id.indexOf('/');
    const namespace = slash < 0 ? '' : id.slice(0, slash);
    const group = byNamespace.get(namespace);
    if (group) group.push(id);
    else byNamespace.set(namespace, [id]);
  }
  const groups = [...byNamespace.values()];
  const order: string[] = [];
  for (let i = 0; order.length < ids.length; i += 1) for (const group of groups) if (i < group.length) order.push(group[i]!);
  return order;
}
