// Helpers over an object's identity and metadata, written once for every deployable: its key, its
// controller, a controller ownerReference to it, whether a reference names it, JSON pointers and equality.
// Pure and free of Node built-ins: functions import it through lib/sdk.
import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';

/** "namespace/name", or "name" when cluster-scoped: the key of an object inside one resource type (and the queue key). */
export function objectKey(metadata: { namespace?: string; name?: string } | undefined): string {
  const name = metadata?.name ?? '';
  return metadata?.namespace ? `${metadata.namespace}/${name}` : name;
}

/** The object's controller ownerReference, if it has one. */
export function controllerRef(object: KubernetesObject | undefined): V1OwnerReference | undefined {
  return object?.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** The uid of the object's controller ownerReference, if it has one. */
export function controllerUid(object: KubernetesObject | undefined): string | undefined {
  return controllerRef(object)?.uid;
}

/** The controller ownerReference that makes `owner` the controller of a child (garbage collection, adoption). */
export function controllerReference(owner: KubernetesObject): V1OwnerReference {
  return {
    apiVersion: owner.apiVersion ?? '',
    kind: owner.kind ?? '',
    name: owner.metadata?.name ?? '',
    uid: owner.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** A reference to an object by apiVersion, kind, namespace and name (an action's target). */
export interface ObjectRef {
  apiVersion?: string;
  kind?: string;
  namespace?: string | null;
  name?: string;
}

/** Whether `ref` names `object` itself; an absent and a null namespace are the same (cluster-scoped). */
export function refersTo(ref: ObjectRef, object: KubernetesObject): boolean {
  return (
    ref.apiVersion === object.apiVersion &&
    ref.kind === object.kind &&
    ref.name === object.metadata?.name &&
    (ref.namespace ?? undefined) === (object.metadata?.namespace ?? undefined)
  );
}

/** RFC 6901: escapes "~" and "/" in one segment of a JSON pointer (a label or annotation key). */
export function pointerEscape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Deep equality of two values as JSON sends them: key order does not matter, a member whose value is
 * undefined is absent, and undefined elsewhere reads as null (JSON.stringify's rules), so an object a
 * function built with optional fields equals the one the API server returns. No node:util, so functions on
 * Workers can use it; the SDK exports this one.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const x = a ?? null;
  const y = b ?? null;
  if (Object.is(x, y)) return true;
  if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
  if (Array.isArray(x) || Array.isArray(y)) {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!jsonEqual(x[i], y[i])) return false;
    return true;
  }
  return sameMembers(x as Record<string, unknown>, y as Record<string, unknown>, NO_KEYS);
}

const NO_KEYS: readonly string[] = [];

/**
 * jsonEqual of two objects with the top-level `keys` left out (no copy made: a watch event's predicate asks
 * this of every update). An absent object compares as an empty one.
 */
export function jsonEqualExcept(a: object | undefined, b: object | undefined, keys: readonly string[]): boolean {
  return sameMembers((a ?? {}) as Record<string, unknown>, (b ?? {}) as Record<string, unknown>, keys);
}

// for-in over own members rather than for-of over Object.keys: no array and no iterator result per member, which
// the router's tiers below TurboFan allocate (bench:heap-profile), on every watch update of every Loop.
function sameMembers(left: Record<string, unknown>, right: Record<string, unknown>, skip: readonly string[]): boolean {
  let members = 0;
  for (const key in left) {
    if (!Object.hasOwn(left, key)) continue;
    const value = left[key];
    if (value === undefined || skip.includes(key)) continue;
    members += 1;
    const other = Object.hasOwn(right, key) ? right[key] : undefined;
    if (other === undefined || !jsonEqual(value, other)) return false;
  }
  let rightMembers = 0;
  for (const key in right) if (Object.hasOwn(right, key) && right[key] !== undefined && !skip.includes(key)) rightMembers += 1;
  return members === rightMembers;
}

/** JSON with object keys sorted at every level: equal for values jsonEqual calls equal, so it can key a map or a hash. */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
