// The related-object index: from each related object (by kind, key, namespace and labels) to the primaries
// that refer to it, so a change of a ConfigMap calls exactly the Deployments naming it. Pure: the runner
// feeds it each primary's targets (related-relation.ts) and asks it on every related event.
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { KubeObject } from '../../lib/contract/types.ts';
import { matchesLabelSelector } from '../../lib/kube/label-selector.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { RelatedTarget } from '../base/related-relation.ts';

const ALL_NAMESPACES = '*';

/** The primaries of one relation (one kind, one entry name). */
class RelationIndex {
  /** Object key -> primaries naming it. */
  readonly byKey = new Map<string, Set<string>>();
  /** Namespace (or "*") -> primary -> its selector there. */
  readonly selectors = new Map<string, Map<string, V1LabelSelector>>();
  readonly targets = new Map<string, RelatedTarget>();

  set(primary: string, target: RelatedTarget | undefined): void {
    this.remove(primary);
    if (!target) return;
    this.targets.set(primary, target);
    if (target.kind === 'names') {
      for (const key of target.keys) getOrCreate(this.byKey, key, () => new Set()).add(primary);
    } else {
      getOrCreate(this.selectors, target.namespace ?? ALL_NAMESPACES, () => new Map()).set(primary, target.selector);
    }
  }

  remove(primary: string): void {
    const old = this.targets.get(primary);
    if (!old) return;
    this.targets.delete(primary);
    if (old.kind === 'names') {
      for (const key of old.keys) deleteFrom(this.byKey, key, (s) => (s.delete(primary), s.size === 0));
    } else {
      deleteFrom(this.selectors, old.namespace ?? ALL_NAMESPACES, (m) => (m.delete(primary), m.size === 0));
    }
  }

  primariesOf(object: KubeObject, into: Set<string>): void {
    for (const p of this.byKey.get(objectKey(object.metadata)) ?? []) into.add(p);
    const labels = object.metadata?.labels;
    const scopes = [ALL_NAMESPACES, ...(object.metadata?.namespace ? [object.metadata.namespace] : [])];
    for (const scope of scopes) {
      for (const [p, selector] of this.selectors.get(scope) ?? []) if (matchesLabelSelector(selector, labels)) into.add(p);
    }
  }
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = create()));
  return value;
}

function deleteFrom<K, V>(map: Map<K, V>, key: K, emptied: (value: V) => boolean): void {
  const value = map.get(key);
  if (value !== undefined && emptied(value)) map.delete(key);
}

/** A primary to call because a related object changed, and the entry that relates them. */
export interface AffectedPrimary {
  primary: string;
  relation: string;
}

export class RelatedIndex {
  /** kind key ("ConfigMap.v1") -> relation name -> index. */
  readonly #byKind = new Map<string, Map<string, RelationIndex>>();

  /** Records what `primary` refers to under one relation of a kind; undefined: nothing (any old entry goes). */
  set(kind: string, relation: string, primary: string, target: RelatedTarget | undefined): void {
    const relations = getOrCreate(this.#byKind, kind, () => new Map<string, RelationIndex>());
    const index = getOrCreate(relations, relation, () => new RelationIndex());
    index.set(primary, target);
    if (index.targets.size === 0) relations.delete(relation);
    if (relations.size === 0) this.#byKind.delete(kind);
  }

  /** What `primary` refers to under one relation, as last recorded. */
  target(kind: string, relation: string, primary: string): RelatedTarget | undefined {
    return this.#byKind.get(kind)?.get(relation)?.targets.get(primary);
  }

  /** Forgets a primary under every relation (it was deleted), or under those `which` picks. */
  forget(primary: string, which: (kind: string, relation: string) => boolean = () => true): void {
    for (const [kind, relations] of this.#byKind) {
      for (const [relation, index] of relations) {
        if (!which(kind, relation)) continue;
        index.remove(primary);
        if (index.targets.size === 0) relations.delete(relation);
      }
      if (relations.size === 0) this.#byKind.delete(kind);
    }
  }

  /** The primaries one object of `kind` is related to, each once per relation, in a stable order. */
  affected(kind: string, ...states: Array<KubeObject | undefined>): AffectedPrimary[] {
    const out: AffectedPrimary[] = [];
    for (const [relation, index] of this.#byKind.get(kind) ?? []) {
      const primaries = new Set<string>();
      // An update passes the old and the new state: a pod leaving a selector concerns its old Service too.
      for (const state of states) if (state) index.primariesOf(state, primaries);
      for (const primary of [...primaries].sort()) out.push({ primary, relation });
    }
    return out;
  }

  /** Relations per kind with at least one primary (metrics, tests). */
  size(kind: string, relation: string): number {
    return this.#byKind.get(kind)?.get(relation)?.targets.size ?? 0;
  }
}
