// How many namespaced Loops of one tenant (namespace) the router runs: the oldest N, the rest wait with
// Ready=False, TenantLimitExceeded, until older ones are deleted. ClusterLoops, a cluster admin's, are not
// counted. The arithmetic is lib/kube/oldest-per-namespace.ts (the gateway's hook limit keeps the same);
// TenantLoopLimit applies it to the Loop objects the controller sees.
import { LOOP_KIND, type Loop } from '../../api/loop.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { beyondOldestPerNamespace, type NamespacedAge, type OverLimit } from '../../lib/kube/oldest-per-namespace.ts';
import { timestampOf } from '../../lib/kube/meta-time.ts';

/**
 * Far above what one team's controllers need, far below what costs the router real memory and metric series
 * (300 idle Loops: +15 MiB and 3,600 series). 0 turns the limit off.
 */
export const DEFAULT_MAX_LOOPS_PER_TENANT = 50;

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
    const place = beyondOldestPerNamespace(this.#ofNamespace(namespace), this.max).get(id);
    return place ? overLimitMessage(namespace, this.max, place) : undefined;
  }

  /** The namespace's Loops when it holds at least as many as the limit: a Loop added or gone may move one of them. */
  affected(namespace: string | undefined): string[] {
    const loops = this.max > 0 && namespace ? this.#ofNamespace(namespace) : [];
    return loops.length >= this.max ? loops.map((l) => l.id) : [];
  }

  #ofNamespace(namespace: string): NamespacedAge[] {
    return this.loops()
      .filter((l) => l.metadata.namespace === namespace)
      .map((l) => ({ id: objectKey(l.metadata), namespace, created: timestampOf(l.metadata.creationTimestamp) }));
  }
}
