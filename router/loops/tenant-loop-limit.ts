// How many namespaced Loops of one tenant (namespace) the router runs: the oldest N, the rest wait with
// Ready=False, TenantLimitExceeded, until older ones are deleted. ClusterLoops, a cluster admin's, are not
// counted. Pure: which Loops are over the limit, from their identities and creation times.

/**
 * Far above what one team's controllers need, far below what costs the router real memory and metric series
 * (300 idle Loops: +15 MiB and 3,600 series). 0 turns the limit off.
 */
export const DEFAULT_MAX_LOOPS_PER_TENANT = 50;

/** What the limit reads of a Loop. */
export interface LoopAge {
  /** `<namespace>/<name>`. */
  id: string;
  namespace: string;
  /** metadata.creationTimestamp (RFC 3339, second resolution). */
  created: string;
}

/** A Loop past its tenant's limit: its place among its tenant's Loops, oldest first (1-based), and their number. */
export interface OverLimit {
  position: number;
  total: number;
}

/**
 * The Loops past `max` in their namespace, oldest first by creation time, then by identity (creation times
 * share a second): the same answer on every replica and after every restart. max 0: none.
 */
export function loopsOverTenantLimit(loops: readonly LoopAge[], max: number): Map<string, OverLimit> {
  const over = new Map<string, OverLimit>();
  if (max <= 0) return over;
  const byTenant = new Map<string, LoopAge[]>();
  for (const loop of loops) byTenant.set(loop.namespace, [...(byTenant.get(loop.namespace) ?? []), loop]);
  for (const tenantLoops of byTenant.values()) {
    if (tenantLoops.length <= max) continue;
    const ordered = [...tenantLoops].sort((a, b) => (a.created < b.created ? -1 : a.created > b.created ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    ordered.forEach((loop, i) => {
      if (i >= max) over.set(loop.id, { position: i + 1, total: ordered.length });
    });
  }
  return over;
}

/** The Ready message of a Loop over its tenant's limit. */
export function overLimitMessage(namespace: string, max: number, place: OverLimit): string {
  return (
    `namespace ${namespace} has ${place.total} Loops and the router runs at most ${max} per namespace (--max-loops-per-tenant), ` +
    `the oldest first: this one is number ${place.position}, so it does not run; it starts once ${place.position - max} older Loop(s) of ${namespace} are deleted`
  );
}
