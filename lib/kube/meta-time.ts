// Kubernetes' two wire formats of a time, written once: metav1.Time (RFC 3339, whole seconds: conditions,
// timestamps) and metav1.MicroTime (microseconds: Lease renewals, events.k8s.io eventTime).

/** metav1.Time: RFC 3339 in UTC to the second (the fraction dropped, as the API server stores it). */
export function metaTime(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** metav1.MicroTime: RFC 3339 with six fraction digits (a Date holds milliseconds, so the last three are 0). */
export function microTime(date: Date): string {
  return date.toISOString().replace(/(\.\d{3})Z$/, '$1000Z');
}

/**
 * A timestamp read from an object as RFC 3339 (an informer's cache holds parsed JSON, a string, whatever the
 * client-node model's `Date` type says), or undefined when it is absent or not a time.
 */
export function timestampOf(value: unknown): string | undefined {
  return value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : undefined;
}
