// The informer's cache: objects by "namespace/name" plus secondary indexes (e.g. by controller owner uid).
import type { KubernetesObject } from '@kubernetes/client-node';
import { controllerUid, objectKey } from './object-meta.ts';

/** Returns the index values of an object; an object may sit under several values or none. */
export type IndexFunction<T> = (object: T) => string[];

interface Indexer<T> {
  fn: IndexFunction<T>;
  index: Map<string, Set<string>>;
}

export class ObjectStore<T extends KubernetesObject> {
  readonly #objects = new Map<string, T>();
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  /** The indexes with their functions, walked by index on every upsert: no iterator or entry array per object. */
  readonly #indexers: Indexer<T>[] = [];

  constructor(indexers: Record<string, IndexFunction<T>> = {}) {
    for (const [name, fn] of Object.entries(indexers)) this.addIndex(name, fn);
  }

  get size(): number {
    return this.#objects.size;
  }

  /** Adds an index; existing objects are indexed at once. */
  addIndex(name: string, fn: IndexFunction<T>): void {
    if (this.#indexes.has(name)) return;
    const index = new Map<string, Set<string>>();
    this.#indexes.set(name, index);
    this.#indexers.push({ fn, index });
    for (const [key, object] of this.#objects) addTo(index, fn(object), key);
  }

  get(key: string): T | undefined {
    return this.#objects.get(key);
  }

  keys(): IterableIterator<string> {
    return this.#objects.keys();
  }

  list(): T[] {
    return [...this.#objects.values()];
  }

  /** Objects whose index `name` yields `value`. */
  byIndex(name: string, value: string): T[] {
    const keys = this.#indexes.get(name)?.get(value);
    if (!keys) return [];
    const result: T[] = [];
    for (const key of keys) {
      const object = this.#objects.get(key);
      if (object) result.push(object);
    }
    return result;
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(object: T): T | undefined {
    const key = objectKey(object.metadata);
    const previous = this.#objects.get(key);
    this.#objects.set(key, object);
    for (let i = 0; i < this.#indexers.length; i++) {
      const { fn, index } = this.#indexers[i]!;
      const values = fn(object);
      if (previous) {
        // Most updates (status, labels) leave an owner, uid or namespace as it was: nothing to move.
        const before = fn(previous);
        if (sameValues(before, values)) continue;
        removeFrom(index, before, key);
      }
      addTo(index, values, key);
    }
    return previous;
  }

  delete(key: string): T | undefined {
    const previous = this.#objects.get(key);
    if (!previous) return undefined;
    this.#unindex(key, previous);
    this.#objects.delete(key);
    return previous;
  }

  clear(): void {
    this.#objects.clear();
    for (const index of this.#indexes.values()) index.clear();
  }

  #unindex(key: string, object: T): void {
    for (let i = 0; i < this.#indexers.length; i++) removeFrom(this.#indexers[i]!.index, this.#indexers[i]!.fn(object), key);
  }
}

function removeFrom(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    const keys = index.get(value);
    keys?.delete(key);
    if (keys?.size === 0) index.delete(value);
  }
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function addTo(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    let keys = index.get(value);
    if (!keys) index.set(value, (keys = new Set()));
    keys.add(key);
  }
}

export const CONTROLLER_UID_INDEX = 'controllerUid';

/** Index function: the uid of the object's controller ownerReference, if any. */
export function controllerUidOf(object: KubernetesObject): string[] {
  const uid = controllerUid(object);
  return uid ? [uid] : [];
}

/** Objects by namespace: a related label selector looks in one namespace of a cluster-wide cache. */
export const NAMESPACE_INDEX = 'namespace';

export function namespaceOf(object: KubernetesObject): string[] {
  return object.metadata?.namespace ? [object.metadata.namespace] : [];
}
