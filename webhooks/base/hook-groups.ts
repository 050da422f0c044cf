// Namespaced AdmissionHooks share webhook entries: every extra entry costs the API server a call on each
// matching request, so hooks of one shape (what the API server matches and how it calls) are served by one
// entry per slot, whose namespaceSelector lists the namespaces of its hooks; slot k holds the k-th hook of
// each namespace, so each hook is still called once and alone. Pure (docs/admission.md, "Namespaced hooks").
import { createHash } from 'node:crypto';
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { HookMatchCondition, HookRule } from '../../api/admission-hook.ts';
import { canonicalJson } from '../../lib/kube/object-meta.ts';
import { HOOK_GROUP_PATH_PREFIX, type ResolvedHook } from './hook-spec.ts';

/** Everything of a hook the API server sees in its webhook entry, but the namespaces and the path. */
export interface HookShape {
  type: 'mutating' | 'validating';
  rules: HookRule[];
  failurePolicy: 'Ignore' | 'Fail';
  timeoutSeconds: number;
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  matchConditions: HookMatchCondition[];
  objectSelector: V1LabelSelector;
}

export interface HookGroup {
  /** <m|v>-<shape hash>-<slot>: the webhook entry's name and path segment, stable while the shape is. */
  id: string;
  path: string;
  slot: number;
  shape: HookShape;
  /** The group's one hook in each namespace, sorted by namespace. */
  members: Map<string, ResolvedHook>;
  /** The tenant configuration its namespaces hash to (hook-configuration-shards.ts); its entry lives there only. */
  bucket?: number;
}

export function shapeOf(hook: ResolvedHook): HookShape {
  const { spec } = hook;
  return {
    type: spec.type,
    rules: spec.rules,
    failurePolicy: spec.failurePolicy,
    timeoutSeconds: spec.timeoutSeconds,
    ...(spec.type === 'mutating' ? { reinvocationPolicy: spec.reinvocationPolicy ?? 'Never' } : {}),
    matchConditions: spec.matchConditions ?? [],
    objectSelector: spec.objectSelector ?? {},
  };
}

/** 12 hex digits of the shape's hash: 48 bits, so two shapes sharing one is not a practical concern. */
export function shapeKey(shape: HookShape): string {
  return createHash('sha256').update(canonicalJson(shape)).digest('hex').slice(0, 12);
}

export interface Grouping {
  groups: HookGroup[];
  /** Each hook's slot by "<shape key> <hook id>": pass it back next time so a hook keeps its entry. */
  slots: Map<string, number>;
}

/**
 * Groups namespaced hooks by shape and slot. A hook keeps the slot it had (`previous`) while its shape is
 * unchanged, so adding or deleting a neighbour does not move it to another entry (a move leaves a moment
 * where the API server still calls the old one); a new hook takes the lowest slot free in its namespace. The
 * number of entries per shape is the most hooks of that shape one namespace ever held at once.
 */
export function groupNamespacedHooks(hooks: Iterable<ResolvedHook>, previous: ReadonlyMap<string, number> = new Map(), bucketOf?: (namespace: string) => number): Grouping {
  const buckets = new Map<string, { shape: HookShape; key: string; namespace: string; hooks: ResolvedHook[] }>();
  for (const hook of hooks) {
    if (!hook.namespace) continue;
    const shape = shapeOf(hook);
    const key = shapeKey(shape);
    const id = `${key} ${hook.namespace}`;
    const bucket = buckets.get(id) ?? { shape, key, namespace: hook.namespace, hooks: [] };
    bucket.hooks.push(hook);
    buckets.set(id, bucket);
  }
  const slots = new Map<string, number>();
  const groups = new Map<string, HookGroup>();
  for (const { shape, key, namespace, hooks: members } of buckets.values()) {
    members.sort((a, b) => a.name.localeCompare(b.name));
    const taken = new Set<number>();
    const slotOf = new Map<ResolvedHook, number>();
    for (const hook of members) {
      const kept = previous.get(`${key} ${hook.id}`);
      if (kept !== undefined && !taken.has(kept)) {
        taken.add(kept);
        slotOf.set(hook, kept);
      }
    }
    for (const hook of members) {
      if (slotOf.has(hook)) continue;
      let slot = 0;
      while (taken.has(slot)) slot += 1;
      taken.add(slot);
      slotOf.set(hook, slot);
    }
    for (const [hook, slot] of slotOf) {
      slots.set(`${key} ${hook.id}`, slot);
      // Namespaces of one bucket share an entry; the same shape in another bucket is another entry (its own id).
      const bucket = bucketOf?.(namespace);
      const id = `${shape.type === 'mutating' ? 'm' : 'v'}-${key}-${slot}${bucket === undefined ? '' : `-t${bucket}`}`;
      const group = groups.get(id) ?? { id, path: `${HOOK_GROUP_PATH_PREFIX}${id}`, slot, shape, members: new Map(), ...(bucket === undefined ? {} : { bucket }) };
      group.members.set(namespace, hook);
      groups.set(id, group);
    }
  }
  const sorted = [...groups.values()].sort((a, b) => a.id.localeCompare(b.id));
  for (const group of sorted) group.members = new Map([...group.members].sort(([a], [b]) => a.localeCompare(b)));
  return { groups: sorted, slots };
}
