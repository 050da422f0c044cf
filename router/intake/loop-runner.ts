// One running Loop: wires the shared informers to its work queue (informer -> queue), runs the resync,
// and hands each dequeued key to reconcileKey (queue -> dispatch -> apply) with a scope of its state.
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import { isApiError } from '../../lib/kube/kube-client.ts';
import { controllerRef, controllerUid, objectKey } from '../../lib/kube/object-meta.ts';
import { kindKey } from '../../lib/kube/resource-paths.ts';
import { mergeTriggers } from '../reconcile/merge-triggers.ts';
import { Expectations } from '../apply/expectations.ts';
import { UID_INDEX, type InformerLease, type InformerSource } from './informer-registry.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { ConflictReplays } from '../reconcile/conflict-replay.ts';
import { OwnWrites } from '../reconcile/own-writes.ts';
import { selectsNamespace, selectsPrimary, updateTriggers } from '../base/predicates.ts';
import { reconcileKey, type ReconcileDeps, type ReconcileScope } from '../reconcile/reconcile-key.ts';
import { WorkQueue, type QueueItem } from '../base/work-queue.ts';
import type { FairScheduler } from '../base/fair-scheduler.ts';
import { tenantOf } from '../base/tenant-weights.ts';
import { watchEvent, WatchEventLog, type WatchEvent } from '../base/watch-events.ts';
import { describeRef, type RefResolution } from '../base/function-ref.ts';
import { loopMetrics, type LoopMetrics, type ReconcileResult } from '../base/router-metrics.ts';
import { CallBatcher } from '../reconcile/call-batcher.ts';
import { FunctionRefWatch } from './function-ref-watch.ts';
import { RelatedWatch } from './related-watch.ts';
import { RunnerShard } from '../sharding/runner-shard.ts';
import type { ShardGate } from '../sharding/shard-member.ts';
import type { VersionCondition } from '../reconcile/function-versions.ts';
import type { ShadowPairs } from '../reconcile/shadow-pairs.ts';
import { watchFunctionVersions, type FunctionVersionWatch } from './function-version-watch.ts';


export type { LoopHealth, LoopHealthReason } from '../reconcile/reconcile-decision.ts';

export interface LoopRunnerDeps extends ReconcileDeps {
  registry: InformerSource;
  expectationsTimeoutMs?: number;
  /** With --sharding: this member starts only the keys the shard assigns it (docs/sharding.md). */
  shard?: ShardGate;
  /** The router-wide cap on calls in flight, shared fairly across tenants (--max-calls-in-flight). */
  scheduler?: FairScheduler;
  /** A shadow's or canary's condition changed (ShadowDiverged, CanaryRolledBack); the Loop controller writes it. */
  onCondition?: (loop: string, condition: VersionCondition, warning?: { reason: string; message: string }) => void;
  /** Where shadows' divergences are recorded as fixture pairs (--shadow-fixtures). */
  shadowPairs?: ShadowPairs;
}

/** A runner's caches and queue at a glance (benchmarks, status). */
export interface LoopRunnerStats {
  synced: boolean;
  cachedPrimaries: number;
  /** Keys waiting, in flight or delayed. */
  pendingKeys: number;
}

export class LoopRunner {
  readonly #queue: WorkQueue<Trigger>;
  readonly #expectations: Expectations;
  /** Last state of deleted primaries, kept only for Loops with sendDeletes until the call is made. */
  readonly #tombstones = new Map<string, KubeObject>();
  readonly #watchEvents = new WatchEventLog();
  /** The resourceVersions our own covered patches produced, so their watch events skip the call. */
  readonly #ownWrites = new OwnWrites();
  readonly #replays = new ConflictReplays();
  #primary: InformerLease | undefined;
  #owned: Array<InformerLease & { kind: LoopConfig['owns'][number] }> = [];
  #unsubscribe: Array<() => void> = [];
  #resyncTimer: NodeJS.Timeout | undefined;
  readonly #deps: LoopRunnerDeps;
  #scope: ReconcileScope | undefined;
  #stopped = false;
  #cachesComplete = false;
  #functionUrl: string | undefined;
  #refWatch: FunctionRefWatch | undefined;
  #versionWatch: FunctionVersionWatch | undefined;
  #related: RelatedWatch | undefined;
  /** Start times of the keys being processed, read at scrape time (unfinished work, longest running). */
  readonly #processingSince = new Map<string, number>();
  readonly #metrics: LoopMetrics;
  #unwatchQueue: (() => void) | undefined;
  #shard: RunnerShard | undefined;
  /** Resolves when the Loop's caches are complete and its first calls are queued. */
  synced: Promise<void> = new Promise(() => {});

  constructor(
    readonly loop: LoopConfig,
    deps: LoopRunnerDeps,
  ) {
    this.#deps = deps;
    this.#expectations = new Expectations(deps.expectationsTimeoutMs ?? 5 * 60_000);
    this.#functionUrl = loop.functionUrl;
    this.#metrics = loopMetrics(deps.metrics, loop.id);
    const { adds, retries } = this.#metrics;
    this.#queue = new WorkQueue<Trigger>({
      onAdd: () => adds.inc(),
      onDelayedAdd: () => retries.inc(),
      concurrency: loop.maxConcurrency,
      merge: mergeTriggers,
      process: (item) => this.#process(item),
      ...(deps.scheduler ? { fairShare: { scheduler: deps.scheduler, tenant: tenantOf(loop), id: loop.id } } : {}),
      onError: (key, error) => deps.logger.error({ loop: loop.id, key, err: error instanceof Error ? error.stack : String(error) }, 'reconcile crashed'),
    });
  }

  stats(): LoopRunnerStats {
    const queue = this.#queue;
    return {
      synced: this.#cachesComplete,
      cachedPrimaries: this.#primary?.informer.store.size ?? 0,
      pendingKeys: queue.depth + queue.inFlight + queue.delayed,
    };
  }

  /**
   * Acquires the informers and subscribes; resolves at once. `synced` resolves when every cache holds a
   * complete list, so a Loop whose watch is forbidden never blocks the controller that manages Loops.
   */
  async start(): Promise<void> {
    const { registry } = this.#deps;
    const loop = this.loop;
    try {
      this.#primary = await registry.acquire(loop.for, loop.metadataOnly, loop.namespaces);
      for (const kind of loop.owns) this.#owned.push({ ...(await registry.acquire(kind, loop.metadataOnly, loop.namespaces)), kind });
      this.#related = new RelatedWatch(loop, registry, (key, trigger) => this.#enqueueRelated(key, trigger), this.#deps.logger, (key) => this.#primary?.informer.store.get(key) !== undefined);
      await this.#related.start();
      if (loop.functionRef) {
        this.#refWatch = new FunctionRefWatch(loop.functionRef, loop.urlPolicy, (resolution) => this.#refChanged(resolution));
        await this.#refWatch.start(registry);
      }
      await this.#startVersions(registry);
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.#scope = this.#scopeOf(this.#primary);
    const queue = this.#queue;
    this.#unwatchQueue = this.#deps.metrics.watchQueue(loop.id, {
      depth: () => queue.depth,
      activeWorkers: () => queue.inFlight,
      processingSince: () => this.#processingSince.values(),
    }, loop.maxConcurrency);
    const primary = this.#primary.informer;
    if (this.#deps.shard) this.#startShard(this.#deps.shard);
    const related = this.#related;
    const indexed = loop.related.length > 0 && related ? (o: KubeObject) => related.indexPrimary(o) : () => {};
    this.#unsubscribe.push(
      primary.on('add', (o) => {
        indexed(o);
        this.#enqueuePrimary(o, { type: 'ADDED' });
      }),
      primary.on('update', (o, previous) => {
        indexed(o);
        if (updateTriggers(loop, previous, o)) this.#enqueuePrimary(o, { type: 'MODIFIED' });
      }),
      primary.on('delete', (o) => this.#primaryDeleted(o)),
    );
    // A shared informer may have listed before this Loop subscribed: index what it holds already.
    for (const object of primary.store.list()) indexed(object);
    for (const owned of this.#owned) {
      const childKind = owned.kind;
      const enqueueOwner = (child: KubeObject, type: string) => this.#enqueueOwnerOf(child, childKind, type);
      this.#unsubscribe.push(
        owned.informer.on('add', (child) => enqueueOwner(child, 'ADDED')),
        owned.informer.on('delete', (child) => enqueueOwner(child, 'DELETED')),
        owned.informer.on('update', (child, previous) => {
          enqueueOwner(child, 'MODIFIED');
          // A child that changed controller also tells its former owner.
          if (controllerUid(previous) !== controllerUid(child)) enqueueOwner(previous, 'MODIFIED');
        }),
      );
    }
    for (const lease of [this.#primary, ...this.#owned, ...(this.#related?.leases() ?? [])]) {
      this.#unsubscribe.push(
        lease.informer.on('restart', (_reason, error) => {
          if (isApiError(error, 403)) {
            this.#deps.onHealth?.(loop.id, { ready: false, reason: 'Forbidden', message: error?.message ?? 'forbidden' });
          }
        }),
      );
    }
    const caches = [
      primary.waitForSync(),
      ...this.#owned.map((o) => o.informer.waitForSync()),
      ...(this.#related?.leases() ?? []).map((l) => l.informer.waitForSync()),
      this.#refWatch?.synced(),
    ];
    this.synced = Promise.all(caches).then(() => {
      if (this.#stopped) return;
      // Nothing was queued before every cache was complete (a PodSet must never be reconciled against a
      // half-listed set of pods); now every primary gets its first call.
      this.#cachesComplete = true;
      if (this.#shard) this.#shard.takeOver(() => true, { type: 'ADDED' });
      else for (const object of primary.store.list()) this.#enqueuePrimary(object, { type: 'ADDED' });
      this.#scheduleResync();
      this.#reportFunction();
    });
    // stop() before sync rejects waitForSync; that is not an error worth reporting.
    this.synced.catch(() => {});
  }

  /** The shadow and the canary, when the Loop has either (function-version-watch.ts). */
  async #startVersions(registry: LoopRunnerDeps['registry']): Promise<void> {
    this.#versionWatch = await watchFunctionVersions(this.loop, this.#deps, registry, () => {
      // The keys the canary answered for are sent again, now to the stable version.
      for (const object of this.#primary?.informer.store.list() ?? []) {
        if (this.#versionWatch?.versions.inCanaryShare(objectKey(object.metadata))) this.#enqueuePrimary(object, { type: 'RESYNC' });
      }
    });
  }

  /** Sharded: only owned keys are queued and started; keys this member gains are queued from the cache. */
  #startShard(gate: ShardGate): void {
    this.#shard = new RunnerShard({
      gate,
      loop: this.loop,
      client: this.#deps.client,
      logger: this.#deps.logger,
      primaries: () => this.#primary?.informer.store,
      synced: () => this.#cachesComplete,
      children: () => this.#owned.map((o) => ({ resource: o.resource, store: o.informer.store })),
      enqueue: (object, trigger) => this.#enqueuePrimary(object, trigger),
      fenceTimeoutMs: this.#deps.expectationsTimeoutMs,
    });
    this.#unsubscribe.push(this.#shard.subscribe());
  }

  /** Primaries this member owns under a view (sharded routers' status). */
  countOwned(owns: (loop: string, key: string) => boolean): number {
    return this.#shard?.count(owns) ?? 0;
  }

  /** Ready while the function has a URL; Ready=False with the reference's problem while it has none. */
  #reportFunction(): void {
    const resolution = this.#refWatch?.resolution;
    if (resolution && !resolution.ok) {
      this.#deps.onHealth?.(this.loop.id, { ready: false, reason: resolution.reason, message: `${resolution.message}; nothing is sent until it resolves` });
    } else {
      this.#deps.onHealth?.(this.loop.id, { ready: true, reason: 'Running', message: this.#refWatch ? `watching; calling ${this.#functionUrl}` : 'watching' });
    }
  }

  /** spec.function.ref resolved anew: calls go to the new URL; every primary is sent again when it changed. */
  #refChanged(resolution: RefResolution): void {
    const previous = this.#functionUrl;
    this.#functionUrl = resolution.ok ? resolution.url : undefined;
    const ref = this.loop.functionRef;
    const fields = { loop: this.loop.id, ref: ref ? describeRef(ref) : undefined };
    if (resolution.ok) this.#deps.logger.info({ ...fields, url: resolution.url }, 'function reference resolved');
    else this.#deps.logger.warn({ ...fields, reason: resolution.reason, err: resolution.message }, 'function reference does not resolve');
    if (!this.#cachesComplete || this.#stopped) return;
    this.#reportFunction();
    if (this.#functionUrl !== undefined && this.#functionUrl !== previous) {
      for (const object of this.#primary?.informer.store.list() ?? []) this.#enqueuePrimary(object, { type: 'RESYNC' });
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#resyncTimer) clearTimeout(this.#resyncTimer);
    for (const off of this.#unsubscribe.splice(0)) off();
    await this.#refWatch?.stop();
    await this.#versionWatch?.stopWatching();
    await this.#queue.shutdown();
    await this.#versionWatch?.versions.settled();
    await this.#related?.stop();
    this.#unwatchQueue?.();
    const leases = [this.#primary, ...this.#owned].filter((l): l is InformerLease => l !== undefined);
    this.#primary = undefined;
    this.#owned = [];
    this.#scope = undefined;
    await Promise.all(leases.map((l) => l.release()));
  }

  /** Finds a cached object of the primary or an owned kind (authority checks, expectations). */
  #lookup(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined {
    const key = namespace ? `${namespace}/${name}` : name;
    if (apiVersion === this.loop.for.apiVersion && kind === this.loop.for.kind) return this.#primary?.informer.store.get(key);
    return this.#owned.find((o) => o.kind.apiVersion === apiVersion && o.kind.kind === kind)?.informer.store.get(key);
  }

  /** Whether a child (by kindKey and object key) is in the cache, for Expectations. */
  #lookupChild(kind: string, key: string): { uid?: string } | undefined {
    const owned = this.#owned.find((o) => kindKey(o.kind.apiVersion, o.kind.kind) === kind);
    const object = owned?.informer.store.get(key);
    return object ? { uid: object.metadata?.uid } : undefined;
  }

  #enqueuePrimary(object: KubeObject, trigger: Trigger, priority: 'high' | 'low' = 'high', event?: WatchEvent): void {
    if (this.#stopped || !this.#cachesComplete || !selectsPrimary(this.loop, object)) return;
    const key = objectKey(object.metadata);
    if (this.#shard && !this.#shard.owns(key)) return;
    this.#tombstones.delete(key);
    this.#watchEvents.add(key, event ?? watchEvent(trigger.type === 'RESYNC' ? 'resync' : 'primary', trigger.type, object));
    this.#queue.add(key, trigger, priority);
  }

  /** A related object changed: its primaries are called if this Loop selects them (and this member owns them). */
  #enqueueRelated(key: string, trigger: Trigger): void {
    const primary = this.#primary?.informer.store.get(key);
    if (primary) this.#enqueuePrimary(primary, trigger);
  }

  #primaryDeleted(object: KubeObject): void {
    const key = objectKey(object.metadata);
    this.#related?.forgetPrimary(key);
    this.#expectations.forget(key);
    this.#ownWrites.forget(key);
    this.#replays.forget(key);
    if (this.loop.sendDeletes && selectsPrimary(this.loop, object) && (this.#shard?.owns(key) ?? true)) {
      this.#tombstones.set(key, object);
      this.#watchEvents.add(key, watchEvent('primary', 'DELETED', object));
      this.#queue.add(key, { type: 'DELETED' });
      return;
    }
    this.#queue.remove(key);
    this.#watchEvents.forget(key);
  }

  #enqueueOwnerOf(child: KubeObject, childKind: LoopConfig['owns'][number], type: string): void {
    if (this.#stopped || !this.#primary) return;
    const ref = controllerRef(child);
    if (!ref || ref.apiVersion !== this.loop.for.apiVersion || ref.kind !== this.loop.for.kind) return;
    if (!selectsNamespace(this.loop, child.metadata?.namespace)) return;
    const owner = this.#primary.informer.store.byIndex(UID_INDEX, ref.uid)[0];
    if (!owner) return;
    const namespace = child.metadata?.namespace;
    const name = child.metadata?.name ?? '';
    this.#enqueuePrimary(
      owner,
      { type: 'CHILD', child: { apiVersion: childKind.apiVersion, kind: childKind.kind, ...(namespace ? { namespace } : {}), name } },
      'high',
      watchEvent('child', type, child),
    );
  }

  #scheduleResync(): void {
    if (this.#stopped) return;
    // ±10 % jitter so Loops (and replicas) do not resync in step.
    const delay = this.loop.resyncMs * (0.9 + Math.random() * 0.2);
    this.#resyncTimer = setTimeout(() => {
      const primary = this.#primary?.informer;
      for (const object of primary?.store.list() ?? []) this.#enqueuePrimary(object, { type: 'RESYNC' }, 'low');
      this.#scheduleResync();
    }, delay);
    this.#resyncTimer.unref();
  }

  /** What reconcileKey may see and move of this runner; built once the informers are acquired. */
  #scopeOf(primary: InformerLease): ReconcileScope {
    return {
      loop: this.loop,
      deps: this.#deps,
      queue: this.#queue,
      expectations: this.#expectations,
      tombstones: this.#tombstones,
      ownWrites: this.#ownWrites,
      replays: this.#replays,
      primaries: primary.informer.store,
      owned: this.#owned.map((o) => ({ kind: o.kind, store: o.informer.store })),
      related: this.#related?.stores() ?? [],
      requirements: this.#related ?? { get: () => undefined, set: () => {} },
      lookup: (apiVersion, kind, namespace, name) => this.#lookup(apiVersion, kind, namespace, name),
      lookupChild: (kind, key) => this.#lookupChild(kind, key),
      functionUrl: () => this.#functionUrl,
      ...(this.#versionWatch ? { versions: this.#versionWatch.versions } : {}),
      invoke: this.#batcher()?.invoke,
    };
  }

  /** Batches the Loop's calls when it allows batches and the invoker can send them (HTTP; not in-process benches). */
  #batcher(): CallBatcher | undefined {
    const { invoke, logger, metrics } = this.#deps;
    const loop = this.loop;
    if (loop.batchMaxSize < 2 || !invoke.batch || loop.maxConcurrency < 2) return undefined;
    return new CallBatcher(invoke, invoke.batch, {
      maxSize: loop.batchMaxSize,
      onBatch: (size) => metrics.functionBatches.observe({ loop: loop.id }, size),
      onNotBatch: (url, reason) => logger.info({ loop: loop.id, url, reason }, 'the function does not answer batches; calling it once per key'),
    });
  }

  async #process(item: QueueItem<Trigger>): Promise<void> {
    // Taken before anything can return: the log holds events only for keys waiting in the queue.
    const events = this.#watchEvents.take(item.key);
    // Another member owns the key now (a handover since it was queued): it is that member's to reconcile.
    const release = this.#shard ? this.#shard.begin(item.key) : () => {};
    if (!release) return;
    const metrics = this.#metrics;
    const started = performance.now();
    metrics.queueWait.observe((started - item.enqueuedAt) / 1000);
    this.#processingSince.set(item.key, started);
    let result: ReconcileResult = 'error';
    try {
      if (this.#scope) result = (await reconcileKey(this.#scope, item, events)) ?? 'success';
    } finally {
      release();
      this.#processingSince.delete(item.key);
      const seconds = (performance.now() - started) / 1000;
      metrics.workDuration.observe(seconds);
      metrics.reconcileTime.observe(seconds);
      metrics.results[result].inc();
      if (result === 'error') metrics.errors.inc();
    }
  }
}
