// What one ReconcileRequest may carry of related objects (spec.related and `requires`), and the decision
// whether a request measured before it is built stays within it. Pure. docs/security.md, tenant bounds.

export interface RequestCaps {
  /** Objects one related entry (declared or required) may send. */
  objectsPerEntry: number;
  /** Related objects one request may send, all entries together. */
  objectsPerRequest: number;
  /** JSON bytes of the related objects one request may send, all entries together. */
  relatedBytesPerRequest: number;
}

/**
 * Legitimate use fits: a Loop relating every ConfigMap of a busy namespace (hundreds), or a few large ones
 * (8 MiB is five objects at etcd's 1.5 MiB limit). A request bomb (4 entries of 8 ConfigMaps of 900 kB,
 * ~30 MB per call) does not.
 */
export const DEFAULT_REQUEST_CAPS: RequestCaps = { objectsPerEntry: 1000, objectsPerRequest: 2000, relatedBytesPerRequest: 8 * 1024 * 1024 };

/** Running totals of the related objects measured so far for one request. */
export interface RelatedTally {
  objects: number;
  bytes: number;
}

/** The problem with an entry of `count` objects, before any of them is measured or projected; undefined when it fits. */
export function entryCountProblem(entry: string, count: number, tally: RelatedTally, caps: RequestCaps): string | undefined {
  if (count > caps.objectsPerEntry) return `related entry "${entry}" selects ${count} objects; at most ${caps.objectsPerEntry} per entry (--max-related-objects-per-entry)`;
  if (tally.objects + count > caps.objectsPerRequest) return `the related objects of one request would number ${tally.objects + count}; at most ${caps.objectsPerRequest} per request (--max-related-objects-per-request)`;
  return undefined;
}

/** The problem once `bytes` more are added (the entry `entry`'s next object); undefined when the total fits. */
export function bytesProblem(entry: string, bytes: number, tally: RelatedTally, caps: RequestCaps): string | undefined {
  const total = tally.bytes + bytes;
  if (total <= caps.relatedBytesPerRequest) return undefined;
  return `the related objects of one request would take more than ${caps.relatedBytesPerRequest} bytes (${total} with entry "${entry}"); at most ${caps.relatedBytesPerRequest} per request (--max-related-bytes-per-request)`;
}

/** Whether a request of `bytes` can ever be sent under a budget of `capacity` bytes in flight. */
export function budgetProblem(bytes: number, capacity: number): string | undefined {
  if (bytes <= capacity) return undefined;
  return `the request would take about ${bytes} bytes, more than the router sends at once to every function together (${capacity} bytes, --max-request-bytes-in-flight)`;
}
