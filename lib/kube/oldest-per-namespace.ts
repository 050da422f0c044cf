// The per-namespace cap the router (Loops per tenant) and the gateway (AdmissionHooks per tenant) both keep:
// the oldest N objects of each namespace are served, the rest wait. Pure, and the same answer on every replica.

/** What the cap reads of an object. */
export interface NamespacedAge {
  /** The object's identity (`<namespace>/<name>`): the key of the answer, and the tie-break. */
  id: string;
  /** undefined: cluster-scoped, never counted. */
  namespace: string | undefined;
  /** metadata.creationTimestamp (RFC 3339 UTC, second resolution, so it sorts as a string); absent sorts first. */
  created: string | undefined;
}

/** An object past its namespace's cap: its place among its namespace's objects, oldest first (1-based), and their number. */
export interface OverLimit {
  position: number;
  total: number;
}

/**
 * The objects past the oldest `max` of their namespace, by id: oldest first by creation time, then by id
 * (creation times share a second), so a new object never displaces a served one and every replica and every
 * restart agrees. max 0 or less: none (the cap is off).
 */
export function beyondOldestPerNamespace(objects: Iterable<NamespacedAge>, max: number): Map<string, OverLimit> {
  const over = new Map<string, OverLimit>();
  if (max <= 0) return over;
  const byNamespace = new Map<string, NamespacedAge[]>();
  for (const object of objects) {
    if (!object.namespace) continue;
    const members = byNamespace.get(object.namespace);
    if (members) members.push(object);
    else byNamespace.set(object.namespace, [object]);
  }
  for (const members of byNamespace.values()) {
    if (members.length <= max) continue;
    const ordered = [...members].sort((a, b) => compare(a.created ?? '', b.created ?? '') || compare(a.id, b.id));
    ordered.forEach((object, i) => {
      if (i >= max) over.set(object.id, { position: i + 1, total: ordered.length });
    });
  }
  return over;
}

/** Code-unit order: the same on every machine, whatever its locale. */
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
