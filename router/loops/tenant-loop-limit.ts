// How many namespaced Loops of one tenant (namespace) the router runs: the oldest N, the rest wait with
// Ready=False, TenantLimitExceeded, until older ones are deleted. ClusterLoops, a cluster admin's, are not
// counted. Pure: which Loops are over the limit, from their identities and creation times; TenantLoopLimit
// applies it to the Loop objects the controller sees.
import { LOOP_KIND, type Loop } from '../../api/loop.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { timestampOf } from '../../lib/kube/meta-time.ts';

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

/** The limit over the namespaced Loops the router selects (`loops` lists them). */
export class TenantLoopLimit {
  constructor(
    readonly max: number,
    private readonly loops: () => readonly Loop[],
  ) {}

  /** Why the Loop may not run now (its namespace runs as many older Loops as it may), or undefined. */
  overLimit(id: string, loop: Loop | undefined): string | undefined {
    const namespace = loop?.kind === LOOP_KIND ? loop.metadata.namespace : undefined;
    if (!namespace || this.max <= 0) return undefined;
    const place = loopsOverTenantLimit(this.#ofNamespace(namespace), this.max).get(id);
    return place ? overLimitMessage(namespace, this.max, place) : undefined;
  }

  /** The namespace's Loops when it holds at least as many as the limit: a Loop added or gone may move one of them. */
  affected(namespace: string | undefined): string[] {
    const loops = this.max > 0 && namespace ? this.#ofNamespace(namespace) : [];
    return loops.length >= this.max ? loops.map((l) => l.id) : [];
  }

  #ofNamespace(namespace: string): LoopAge[] {
    return this.loops()
      .filter((l) => l.metadata.namespace === namespace)
      .map((l) => ({ id: objectKey(l.metadata), namespace, created: timestampOf(l.metadata.creationTimestamp) ?? '' }));
  }
}
