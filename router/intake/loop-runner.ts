// One running Loop: wires the shared informers to its work queue (informer -> queue), runs the resync,
// and hands each dequeued key to reconcileKey (queue -> dispatch -> apply) with a scope of its state.
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { mergeTriggers } from '../reconcile/merge-triggers.ts';
import { DEFAULT_EXPECTATIONS_TIMEOUT_MS, Expectations } from '../apply/expectations.ts';
import type { InformerLease, InformerSource } from './informer-registry.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { ConflictReplays } from '../reconcile/conflict-replay.ts';
import { OwnWrites } from '../reconcile/own-writes.ts';
import { selectsPrimary } from '../base/predicates.ts';
import { reconcileKey } from '../reconcile/reconcile-key.ts';
import type { KeyMemory, ReconcileDeps, ReconcileScope } from '../reconcile/reconcile-scope.ts';
import { WorkQueue, type QueueItem } from '../base/work-queue.ts';
import type { WorkerShare } from '../base/worker-turns.ts';
import type { FairScheduler } from '../base/fair-scheduler.ts';
import { tenantOf } from '../base/tenant-weights.ts';
import { watchEvent, WatchEventLog, type WatchEvent } from '../base/watch-events.ts';
import { loopMetrics, type LoopMetrics, type ReconcileResult } from '../base/router-metrics.ts';
import { keyGroupMax, loopBatcher } from '../reconcile/call-batcher.ts';
import { subscribeRunner } from './runner-handlers.ts';
import { FunctionEndpoint } from './function-endpoint.ts';
import { settleOwnWrite, settleWaitingOwnWrite, type OwnWriteIntake } from './own-write-intake.ts';
import { RelatedWatch } from './related-watch.ts';
import { RunnerShard } from '../sharding/runner-shard.ts';
import type { ShardGate } from '../sharding/shard-member.ts';
import type { VersionCondition } from '../reconcile/function-versions.ts';
import type { ShadowPairs } from '../reconcile/shadow-pairs.ts';
import { watchFunctionVersions, type FunctionVersionWatch } from './function-version-watch.ts';
import { InitialKeys } from './initial-keys.ts';
import { callsBeforePrimarySync, EarlyPrimaries } from './early-primaries.ts';
import { primaryUidOf, runnerCaches } from './runner-caches.ts';
import { warmAhead } from './warm-ahead.ts';
import { startResync } from './resync-timer.ts';

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
  /** Opens the router's write session ahead of the first write; called once the Loop's lists are asked for. */
  warmWrites?: () => void;
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
  /** Per key: expectations, tombstones (sendDeletes), our own writes (their watch events skip the call), kept answers. */
  readonly #memory: KeyMemory;
  readonly #watchEvents = new WatchEventLog();
  #primary: InformerLease | undefined;
  #owned: Array<InformerLease & { kind: LoopConfig['owns'][number] }> = [];
  #unsubscribe: Array<() => void> = [];
  readonly #deps: LoopRunnerDeps;
  #scope: ReconcileScope | undefined;
  #stopped = false;
  #cachesComplete = false;
  readonly #function: FunctionEndpoint;
  #versionWatch: FunctionVersionWatch | undefined;
  #related: RelatedWatch | undefined;
  /** Start times of the keys being processed, read at scrape time (unfinished work, longest running). */
  readonly #processingSince = new Map<string, number>();
  readonly #metrics: LoopMetrics;
  readonly #ownWriteIntake: OwnWriteIntake;
  #unwatchQueue: (() => void) | undefined;
  #shard: RunnerShard | undefined;
  /** The primaries' first calls still being queued after the sync (initial-keys.ts). */
  #initial: InitialKeys | undefined;
  /** The primaries called before their list was complete, until the sync (early-primaries.ts). */
  #early: EarlyPrimaries | undefined;
  /** Resolves when the Loop's caches are complete and its first calls are queued. */
  synced: Promise<void> = new Promise(() => {});

  constructor(
    readonly loop: LoopConfig,
    deps: LoopRunnerDeps,
  ) {
    this.#deps = deps;
    const expectations = new Expectations(deps.expectationsTimeoutMs ?? DEFAULT_EXPECTATIONS_TIMEOUT_MS);
    this.#memory = { expectations, tombstones: new Map(), ownWrites: new OwnWrites(), replays: new ConflictReplays() };
    this.#function = new FunctionEndpoint({
      loop,
      logger: deps.logger,
      onHealth: deps.onHealth,
      live: () => this.#cachesComplete && !this.#stopped,
      resendAll: () => {
        for (const object of this.#primary?.informer.store.list() ?? []) this.#enqueuePrimary(object, { type: 'RESYNC' });
      },
    });
    this.#metrics = loopMetrics(deps.metrics, loop.id);
    const { adds, retries } = this.#metrics;
    this.#queue = new WorkQueue<Trigger>({
      onAdd: () => adds.inc(),
      onDelayedAdd: () => retries.inc(),
      concurrency: loop.maxConcurrency,
      merge: mergeTriggers,
      // Batched calls: a backlog's keys go a few to a worker, their calls in one request, their writes in turn.
      groupMax: keyGroupMax(loop, deps.invoke),
      process: (item, share) => this.#process(item, share),
      settleDirty: (key, trigger) => settleWaitingOwnWrite(this.#ownWriteIntake, key, trigger, this.#watchEvents, this.#primaryOf(key)),
      ...(deps.scheduler ? { fairShare: { scheduler: deps.scheduler, tenant: tenantOf(loop), id: loop.id } } : {}),
      onError: (key, error) => deps.logger.error({ loop: loop.id, key, err: error instanceof Error ? error.stack : String(error) }, 'reconcile crashed'),
    });
    const skips = { loop: loop.id };
    this.#ownWriteIntake = { loop, ownWrites: this.#memory.ownWrites, queue: this.#queue, history: deps.history, hasFunction: () => this.#function.url !== undefined, counted: () => deps.metrics.ownWriteSkips.inc(skips) };
  }

  /** The uid of a primary (what its shard slot follows; runner-caches.ts). */
  primaryUid(key: string): Promise<string | undefined> {
    return primaryUidOf(this.#primary, this.#deps.client, key);
  }

  /** A primary as the cache holds it, or as it was queued before the cache was complete (early-primaries.ts). */
  #primaryOf(key: string): KubeObject | undefined {
    return this.#primary?.informer.store.get(key) ?? this.#early?.get(key);
  }

  /** Milliseconds its keys waited for a router call slot, over its life (a counter; the Throttled condition). */
  callWaitMs(): number {
    return this.#queue.slotWaitMs();
  }

  stats(): LoopRunnerStats {
    const { depth, inFlight, delayed } = this.#queue;
    return { synced: this.#cachesComplete, cachedPrimaries: this.#primary?.informer.store.size ?? 0, pendingKeys: depth + inFlight + delayed };
  }

  /**
   * Acquires the informers and subscribes; resolves at once. `synced` resolves when every cache holds a
   * complete list, so a Loop whose watch is forbidden never blocks the controller that manages Loops.
   * With `allowed` (the Loop's access review, asked while the lists run) nothing is queued, so nothing is
   * called or written, before it resolves; rejected, nothing ever is.
   */
  async start(allowed?: Promise<unknown>): Promise<void> {
    const { registry } = this.#deps;
    const loop = this.loop;
    try {
      // Sharded: the primaries are this member's share, filtered by the API server where it can.
      this.#primary = await registry.acquire(loop.for, loop.metadataOnly, loop.namespaces, this.#deps.shard?.share);
      for (const kind of loop.owns) this.#owned.push({ ...(await registry.acquire(kind, loop.metadataOnly, loop.namespaces)), kind });
      this.#related = new RelatedWatch(loop, registry, (key, trigger) => this.#enqueueRelated(key, trigger), this.#deps.logger, (key) => this.#primaryOf(key) !== undefined);
      await this.#related.start();
      await this.#function.start(registry);
      await this.#startVersions(registry);
    } catch (error) {
      await this.stop();
      throw error;
    }
    // The write session, and the function's connection at the first primary: no handshake left on the first label's path.
    this.#unsubscribe.push(warmAhead({ loop, primary: this.#primary.informer, url: () => this.#function.url, preconnect: this.#deps.invoke.preconnect, writes: this.#deps.warmWrites }));
    this.#scope = this.#scopeOf(this.#primary);
    const queue = this.#queue;
    const gauges = { depth: () => queue.depth, activeWorkers: () => queue.busyWorkers, processingSince: () => this.#processingSince.values() };
    this.#unwatchQueue = this.#deps.metrics.watchQueue(loop.id, gauges, loop.maxConcurrency);
    const primary = this.#primary.informer;
    if (this.#deps.shard) this.#startShard(this.#deps.shard);
    this.#unsubscribe.push(...subscribeRunner({
      loop,
      primary: this.#primary,
      owned: this.#owned,
      related: this.#related,
      enqueuePrimary: (o, trigger, priority, event) => this.#enqueuePrimary(o, trigger, priority, event),
      earlyOwner: (uid) => this.#early?.byUid(uid),
      primaryDeleted: (o) => this.#primaryDeleted(o),
      stopped: () => this.#stopped,
      forbidden: (message) => this.#deps.onHealth?.(loop.id, { ready: false, reason: 'Forbidden', message }),
    }));
    // Every cache but the primary's, the function, the Loop's access: once complete, calls are safe where early ones are.
    const others = [...[...this.#owned, ...(this.#related?.leases() ?? [])].map((l) => l.informer.waitForSync()), this.#function.synced(), ...(allowed ? [allowed] : [])];
    const early = !primary.hasSynced && callsBeforePrimarySync(loop, this.#deps.shard !== undefined) ? (this.#early = new EarlyPrimaries({ queue: (o) => this.#queueEarly(o) }).follow(primary, others)) : undefined;
    this.synced = Promise.all([primary.waitForSync(), ...others]).then(() => {
      if (this.#stopped) return;
      // Nothing was queued before every cache was complete (a PodSet must never be reconciled against a half-listed
      // set of pods) and the Loop's access allowed but early calls; now each other primary gets its first call.
      this.#cachesComplete = true;
      this.#early = undefined;
      const settled = early?.close(primary.store.list());
      for (const gone of settled?.gone ?? []) this.#primaryDeleted(gone);
      for (const key of this.#memory.tombstones.keys()) this.#queue.add(key, { type: 'DELETED' });
      if (this.#shard) this.#shard.takeOver(() => true, { type: 'ADDED' });
      // The first call leaves before thousands of other keys are queued (initial-keys.ts).
      else this.#initial = new InitialKeys({ objects: settled?.firstCalls ?? primary.store.list(), cached: (key) => primary.store.get(key) !== undefined, queue: (o) => this.#queuePrimary(o, { type: 'ADDED' }) }).start();
      this.#unsubscribe.push(startResync(loop.resyncMs, () => {
        for (const object of this.#primary?.informer.store.list() ?? []) this.#enqueuePrimary(object, { type: 'RESYNC' }, 'low');
      }));
      this.#function.report();
      return this.#initial?.done;
    });
    // stop() before sync rejects waitForSync; that is not an error worth reporting.
    this.synced.catch(() => {});
  }

  /** A primary's first call before its list is complete (early-primaries.ts), indexed for its related objects now. */
  #queueEarly(object: KubeObject): boolean {
    if (this.#stopped || this.#cachesComplete || !selectsPrimary(this.loop, object)) return false;
    const key = objectKey(object.metadata);
    if (this.loop.related.length > 0) this.#related?.indexPrimary(object);
    this.#watchEvents.add(key, watchEvent('primary', 'ADDED', object));
    this.#queue.add(key, { type: 'ADDED' });
    return true;
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
    const { client, logger, expectationsTimeoutMs: fenceTimeoutMs } = this.#deps;
    this.#shard = new RunnerShard({
      gate, loop: this.loop, client, logger, fenceTimeoutMs,
      primaries: () => this.#primary?.informer.store,
      synced: () => this.#cachesComplete,
      children: () => this.#owned.map((o) => ({ resource: o.resource, store: o.informer.store })),
      enqueue: (object, trigger) => this.#enqueuePrimary(object, trigger),
    });
    this.#unsubscribe.push(this.#shard.subscribe());
  }

  /** Primaries this member owns under a view (sharded routers' status). */
  countOwned(owns: (slot: number) => boolean): number {
    return this.#shard?.count(owns) ?? 0;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#initial?.cancel();
    this.#early?.close([]);
    for (const off of this.#unsubscribe.splice(0)) off();
    await this.#function.stop();
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

  #enqueuePrimary(object: KubeObject, trigger: Trigger, priority: 'high' | 'low' = 'high', event?: WatchEvent): void {
    // Every primary's first call is queued before anything that happened after the sync (or, early, since open).
    this.#initial?.flush();
    this.#early?.flush();
    this.#queuePrimary(object, trigger, priority, event);
  }

  #queuePrimary(object: KubeObject, trigger: Trigger, priority: 'high' | 'low' = 'high', event?: WatchEvent): void {
    if (this.#stopped || !selectsPrimary(this.loop, object)) return;
    const key = objectKey(object.metadata);
    if (!this.#cachesComplete && !this.#early?.hears(key, trigger)) return;
    if (this.#shard && !this.#shard.owns(key, object)) return;
    this.#memory.tombstones.delete(key);
    // The event of our own write, on a key not queued: settled here, without a pass through the queue.
    if (event === undefined && settleOwnWrite(this.#ownWriteIntake, key, object, trigger)) return;
    this.#watchEvents.add(key, event ?? watchEvent(trigger.type === 'RESYNC' ? 'resync' : 'primary', trigger.type, object));
    this.#queue.add(key, trigger, priority);
  }

  /** A related object changed: its primaries are called if this Loop selects them (and this member owns them). */
  #enqueueRelated(key: string, trigger: Trigger): void {
    const primary = this.#primaryOf(key);
    if (primary) this.#enqueuePrimary(primary, trigger);
  }

  #primaryDeleted(object: KubeObject): void {
    this.#initial?.flush();
    const key = objectKey(object.metadata);
    this.#related?.forgetPrimary(key);
    this.#memory.expectations.forget(key);
    this.#memory.ownWrites.forget(key);
    this.#memory.replays.forget(key);
    if (this.loop.sendDeletes && selectsPrimary(this.loop, object) && (this.#shard?.owns(key, object) ?? true)) {
      this.#memory.tombstones.set(key, object);
      this.#watchEvents.add(key, watchEvent('primary', 'DELETED', object));
      // Before the sync (the Loop's review may still be asked: nothing is called before it) it is queued there.
      if (this.#cachesComplete) this.#queue.add(key, { type: 'DELETED' });
      return;
    }
    this.#queue.remove(key);
    this.#watchEvents.forget(key);
  }

  /** What reconcileKey may see and move of this runner; built once the informers are acquired. */
  #scopeOf(primary: InformerLease): ReconcileScope {
    return {
      loop: this.loop,
      deps: this.#deps,
      queue: this.#queue,
      caches: runnerCaches(this.loop, primary, this.#owned, this.#related, (key) => this.#primaryOf(key)),
      memory: this.#memory,
      function: { url: () => this.#function.url, ...(this.#versionWatch ? { versions: this.#versionWatch.versions } : {}), invoke: loopBatcher(this.loop, this.#deps)?.invoke },
    };
  }

  async #process(item: QueueItem<Trigger>, share: WorkerShare): Promise<void> {
    // Taken before anything can return: the log holds events only for keys waiting in the queue.
    const events = this.#watchEvents.take(item.key);
    // Another member owns the key now (a handover since it was queued): it is that member's to reconcile.
    const release = this.#shard ? this.#shard.begin(item.key, this.#primary?.informer.store.get(item.key) ?? this.#memory.tombstones.get(item.key)) : () => {};
    if (!release) return;
    const metrics = this.#metrics;
    const started = performance.now();
    metrics.queueWait.observe((started - item.enqueuedAt) / 1000);
    this.#processingSince.set(item.key, started);
    let result: ReconcileResult = 'error';
    try {
      if (this.#scope) {
        // What was required last time goes in; what the settled answer required comes back, kept and watched here.
        const outcome = await reconcileKey(this.#scope, item, { events, required: this.#related?.requiredBy(item.key), share });
        if (outcome.required) this.#related?.record(item.key, outcome.required);
        result = outcome.result ?? 'success';
      }
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
