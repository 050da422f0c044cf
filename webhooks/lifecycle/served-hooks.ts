// What the gateway serves, as the hook controller last published it: ClusterAdmissionHooks by name (the
// /admit/<name> route) and namespaced AdmissionHooks by webhook group and namespace (/admit-namespaced/<group>).
import { groupNamespacedHooks, type Grouping } from '../base/hook-groups.ts';
import type { ResolvedHook } from '../base/hook-spec.ts';

export interface ServedHooks {
  /** Every hook served, by identity (<name>, or <namespace>/<name>); namespaced hooks carry their group's path. */
  byId: ReadonlyMap<string, ResolvedHook>;
  /** group id -> namespace -> the group's hook there. */
  groups: ReadonlyMap<string, ReadonlyMap<string, ResolvedHook>>;
}

export const NO_HOOKS: ServedHooks = { byId: new Map(), groups: new Map() };

/** The table for `hooks`, grouped with the slots the previous grouping gave (hook-groups.ts). */
export function servedHooksOf(hooks: Iterable<ResolvedHook>, previousSlots: ReadonlyMap<string, number>, bucketOf?: (namespace: string) => number): { served: ServedHooks; grouping: Grouping } {
  const list = [...hooks];
  const grouping = groupNamespacedHooks(list, previousSlots, bucketOf);
  const byId = new Map(list.map((hook) => [hook.id, hook]));
  const groups = new Map<string, Map<string, ResolvedHook>>();
  for (const group of grouping.groups) {
    const members = new Map<string, ResolvedHook>();
    for (const [namespace, hook] of group.members) {
      const placed = { ...hook, path: group.path };
      members.set(namespace, placed);
      byId.set(hook.id, placed);
    }
    groups.set(group.id, members);
  }
  return { served: { byId, groups }, grouping };
}

/**
 * What is served while a new configuration is written: the API server may still call by the old one or
 * already by the new, so every path and namespace of either is answered (the new hook where both have one).
 */
export function servedDuringUpdate(previous: ServedHooks, next: ServedHooks): ServedHooks {
  const groups = new Map<string, ReadonlyMap<string, ResolvedHook>>(previous.groups);
  for (const [id, members] of next.groups) groups.set(id, new Map([...(previous.groups.get(id) ?? []), ...members]));
  return { byId: new Map([...previous.byId, ...next.byId]), groups };
}
