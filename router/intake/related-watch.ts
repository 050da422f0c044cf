// A Loop's related objects on the intake side: the shared informers of its spec.related kinds and of the
// kinds its function required, the index from each such object to the primaries that refer to it, and the
// enqueue of exactly those primaries (trigger RELATED) when one changes, appears or goes away.
import type { Logger } from 'pino';
import type { KubeObject, RequiredResource, Trigger } from '../../lib/contract/types.ts';
import { kindKey } from '../../lib/kube/resource-paths.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { onlyBookkeepingChanged } from '../base/predicates.ts';
import { projectObject, relatedTarget, relationWatchScope, type RelationConfig } from '../base/related-relation.ts';
import type { RelatedStore } from '../reconcile/related-objects.ts';
import type { ResolvedRequirement, SettledRequirements } from '../reconcile/required-objects.ts';
import type { InformerLease, InformerSource } from './informer-registry.ts';
import { RelatedIndex } from './related-index.ts';

interface DeclaredLease {
  relation: RelationConfig;
  kind: string;
  lease: InformerLease;
}

interface RequiredWatch {
  lease: Promise<InformerLease | undefined>;
  primaries: Set<string>;
  offs: Array<() => void>;
}


export class RelatedWatch {
  readonly index = new RelatedIndex();
  #declared: DeclaredLease[] = [];
  readonly #required = new Map<string, SettledRequirements>();
  readonly #watches = new Map<string, RequiredWatch>();
  readonly #unsubscribe: Array<() => void> = [];
  #stopped = false;

  constructor(
    private readonly loop: LoopConfig,
    private readonly registry: InformerSource,
    /** Calls the primary with this key (the runner checks selection and shard ownership). */
    private readonly enqueue: (primaryKey: string, trigger: Trigger) => void,
    private readonly logger: Logger,
    /** Whether the primary is still cached: the last call of a deleted one must not leave a watch behind. */
    private readonly hasPrimary: (primaryKey: string) => boolean,
  ) {}

  /** Acquires the shared informers of the declared kinds; throws as the registry does (unknown kind, 403). */
  async start(): Promise<void> {
    for (const relation of this.loop.related) {
      // One informer per kind and scope whatever the entry's fields: they are projected when a request is built.
      const lease = await this.registry.acquire(relation.kind, relation.metadataOnly, relationWatchScope(relation, this.loop.namespaces));
      const declared = { relation, kind: kindKey(relation.kind.apiVersion, relation.kind.kind), lease };
      this.#declared.push(declared);
      const changed = (...states: KubeObject[]) => this.#changed(declared.kind, (name) => name === relation.name, states);
      const fields = relation.fields;
      this.#unsubscribe.push(...relatedEvents(lease, changed, fields ? (o) => projectObject(o, fields) : undefined));
    }
  }

  leases(): InformerLease[] {
    return this.#declared.map((d) => d.lease);
  }

  stores(): RelatedStore[] {
    return this.#declared.map(({ relation, lease }) => ({ relation, store: lease.informer.store, namespaced: lease.resource.namespaced }));
  }

  /** A primary appeared or changed: what it refers to now. */
  indexPrimary(primary: KubeObject): void {
    const key = objectKey(primary.metadata);
    for (const { relation, kind, lease } of this.#declared) this.index.set(kind, relation.name, key, relatedTarget(relation, primary, lease.resource.namespaced));
  }

  forgetPrimary(key: string): void {
    this.index.forget(key);
    this.record(key, { entries: [], resolved: [] });
  }

  /** What the primary's function required in its last settled answer (its next call reads them first). */
  requiredBy(key: string): readonly RequiredResource[] | undefined {
    return this.#required.get(key)?.entries;
  }

  /** A settled answer's requirements, as reconcile returned them: kept and watched; [] stops watching them for the primary. */
  record(key: string, settled: SettledRequirements): void {
    const { entries, resolved } = settled;
    const previous = this.#required.get(key);
    // The usual answer: nothing required before or now. Nothing to forget, keep or watch (and no Set for it).
    if (!previous && entries.length === 0) return;
    if (previous) {
      const names = new Set(previous.resolved.map((r) => r.name));
      this.index.forget(key, (_kind, relation) => names.has(relation));
    }
    const kept = entries.length > 0 && !this.#stopped && this.hasPrimary(key) ? resolved : [];
    if (kept.length === 0) this.#required.delete(key);
    else this.#required.set(key, settled);
    for (const r of kept) this.index.set(r.kind, r.name, key, r.target);
    const wanted = new Set(kept.map(watchId));
    for (const r of kept) this.#watch(watchId(r), r, key);
    for (const r of previous?.resolved ?? []) if (!wanted.has(watchId(r))) this.#unwatch(watchId(r), key);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const off of this.#unsubscribe.splice(0)) off();
    const watches = [...this.#watches.values()];
    const leases = [...this.#declared.map((d) => d.lease), ...(await Promise.all(watches.map((w) => w.lease)))];
    for (const off of watches.flatMap((w) => w.offs.splice(0))) off();
    this.#declared = [];
    this.#watches.clear();
    this.#required.clear();
    await Promise.all(leases.map((l) => l?.release()));
  }

  #changed(kind: string, relationMatches: (name: string) => boolean, states: KubeObject[]): void {
    if (this.#stopped) return;
    const object = states[0];
    if (!object) return;
    const namespace = object.metadata?.namespace;
    const target = { apiVersion: object.apiVersion ?? '', kind: object.kind ?? '', ...(namespace ? { namespace } : {}), name: object.metadata?.name ?? '' };
    for (const { primary, relation } of this.index.affected(kind, ...states)) {
      if (relationMatches(relation)) this.enqueue(primary, { type: 'RELATED', related: { name: relation, object: target } });
    }
  }

  /** Required objects are read as the Loop's ServiceAccount on each call; this metadata-only watch only triggers. */
  #watch(id: string, requirement: ResolvedRequirement, primary: string): void {
    const existing = this.#watches.get(id);
    if (existing) {
      existing.primaries.add(primary);
      return;
    }
    const declaredNames = new Set(this.loop.related.map((r) => r.name));
    const watch: RequiredWatch = {
      primaries: new Set([primary]),
      offs: [],
      lease: this.registry
        .acquire({ apiVersion: requirement.resource.apiVersion, kind: requirement.resource.kind }, true, requirement.namespace ? new Set([requirement.namespace]) : undefined)
        .then((lease) => {
          const changed = (...states: KubeObject[]) => this.#changed(requirement.kind, (name) => !declaredNames.has(name), states);
          // Every new resourceVersion counts: the function is sent what a fresh read returns, not this view.
          watch.offs.push(...relatedEvents(lease, changed));
          return lease;
        })
        .catch((error: unknown) => {
          this.logger.warn({ loop: this.loop.id, kind: requirement.kind, namespace: requirement.namespace, err: (error as Error).message }, 'cannot watch required objects: their changes call nothing until the next event of the primary');
          this.#watches.delete(id);
          return undefined;
        }),
    };
    this.#watches.set(id, watch);
  }

  #unwatch(id: string, primary: string): void {
    const watch = this.#watches.get(id);
    if (!watch) return;
    watch.primaries.delete(primary);
    if (watch.primaries.size > 0) return;
    this.#watches.delete(id);
    void watch.lease.then((lease) => {
      for (const off of watch.offs.splice(0)) off();
      return lease?.release();
    });
  }
}

/**
 * Adds, deletes and updates of a related kind. With `project` (an entry listing `fields`) an update whose
 * projections differ only in resourceVersion and managedFields is dropped: the fields the function asked
 * for did not change. A metadata-only entry keeps every new resourceVersion: it is sent, and is the cheap
 * way to learn that an object's content changed.
 */
export function relatedEvents(lease: Pick<InformerLease, 'informer'>, changed: (...states: KubeObject[]) => void, project?: (object: KubeObject) => KubeObject): Array<() => void> {
  return [
    lease.informer.on('add', (o) => changed(o)),
    lease.informer.on('delete', (o) => changed(o)),
    lease.informer.on('update', (o, previous) => {
      if (!project || !onlyBookkeepingChanged(project(previous), project(o))) changed(o, previous);
    }),
  ];
}

function watchId(r: ResolvedRequirement): string {
  return `${r.kind}|${r.namespace ?? '*'}`;
}
