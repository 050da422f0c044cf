// Helpers for related objects: read what the router sent under an entry name, and ask for objects the
// request did not carry (docs/contract.md, "Related objects" and "Asking for objects").
import type { KubeObject, ReconcileRequest, RequiredResource } from '../contract/types.ts';

/**
 * The objects sent under `name` (a spec.related entry or a `requires` entry), sorted by namespace and name.
 * [] when none matches; also [] when the request has no such key (the Loop does not declare the entry, or
 * a required entry not fetched yet): use `isRelatedSent` to tell those apart.
 */
export function relatedOf(request: ReconcileRequest, name: string): KubeObject[] {
  return request.related?.[name] ?? [];
}

/** Whether the request carries the entry at all (a declared entry always does, even when empty). */
export function isRelatedSent(request: ReconcileRequest, name: string): boolean {
  return request.related !== undefined && Object.hasOwn(request.related, name);
}

/** The one object sent under `name` with that name (and namespace, when given), or undefined. */
export function relatedNamed(request: ReconcileRequest, name: string, objectName: string, namespace?: string): KubeObject | undefined {
  return relatedOf(request, name).find((o) => o.metadata?.name === objectName && (namespace === undefined || o.metadata?.namespace === namespace));
}

type Which = { names: string | string[]; namespace?: string } | { selector: NonNullable<RequiredResource['selector']>; namespace?: string };

/**
 * A `requires` entry: `requires('db', { apiVersion: 'v1', kind: 'Secret' }, { names: 'db-credentials' })`.
 * Put it in the answer's `requires` (respond([...], { requires: [...] })) on every call that needs it: the
 * router stops watching it for the primary once an answer no longer asks.
 */
export function requires(name: string, kind: { apiVersion: string; kind: string }, which: Which): RequiredResource {
  const base = { name, apiVersion: kind.apiVersion, kind: kind.kind, ...(which.namespace ? { namespace: which.namespace } : {}) };
  if ('names' in which) return { ...base, names: typeof which.names === 'string' ? [which.names] : [...which.names] };
  return { ...base, selector: which.selector };
}
