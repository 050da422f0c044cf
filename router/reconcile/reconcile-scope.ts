// What a reconcile is lent by its Loop's runner, in the groups the reconcile's pieces take: the world
// outside the Loop (deps), the Loop's caches, what it remembers per key, and where its function is.
import type { Logger } from 'pino';
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import type { OwnedStore } from '../../lib/reconcile/build-request.ts';
import type { ApplyContext } from '../apply/apply-actions.ts';
import type { EventRecorder } from '../apply/event-recorder.ts';
import type { CacheLookup, Expectations } from '../apply/expectations.ts';
import type { StoreView } from '../base/informer-view.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { RequestByteBudget } from '../base/request-byte-budget.ts';
import type { RequestCaps } from '../base/request-caps.ts';
import type { RouterMetrics } from '../base/router-metrics.ts';
import type { WorkQueue } from '../base/work-queue.ts';
import type { ConflictReplays } from './conflict-replay.ts';
import type { FunctionInvoker } from './dispatch.ts';
import type { FixtureRecorder } from './fixture-recorder.ts';
import type { FlightRecorder } from './flight-recorder.ts';
import type { FunctionVersions } from './function-versions.ts';
import type { OwnWrites } from './own-writes.ts';
import type { LoopHealth } from './reconcile-decision.ts';
import type { RelatedStore } from './related-objects.ts';

/** What bounds the requests of every Loop (start-router.ts builds them from the router's flags). */
export interface RequestLimits {
  /** What one request may carry of related objects; DEFAULT_REQUEST_CAPS when omitted. */
  requestCaps?: RequestCaps;
  /** The request bytes in flight, shared by every Loop and divided by tenant; unbounded when omitted. */
  requestBytes?: RequestByteBudget;
}

/** What a reconcile needs from the world outside its Loop. */
export interface ReconcileDeps extends RequestLimits {
  client: KubeClient;
  discovery: ResourceDiscovery;
  invoke: FunctionInvoker;
  events: EventRecorder;
  metrics: RouterMetrics;
  logger: Logger;
  recorder?: FixtureRecorder;
  /** Floor on the delays a function asks for (requeueAfterSeconds, retryAfterSeconds, Retry-After); 1 s by default. */
  minRequeueMs?: number;
  /** The per-object flight recorder (kubeloop history); none: nothing is recorded. */
  history?: FlightRecorder;
  /** Reports the Loop's health whenever a call succeeds or fails; the Loop controller writes conditions. */
  onHealth?: (loop: string, health: LoopHealth) => void;
}

/** The Loop's informer caches, as a reconcile reads them. */
export interface LoopCaches {
  primaries: StoreView;
  owned: readonly OwnedStore[];
  /** The caches of the Loop's spec.related kinds. */
  related: readonly RelatedStore[];
  /** A cached object of the primary or an owned kind (authority checks). */
  lookup: ApplyContext['lookup'];
  /** Whether a child is cached, for Expectations. */
  lookupChild: CacheLookup;
}

/** What the Loop remembers of each key between its reconciles. */
export interface KeyMemory {
  expectations: Expectations;
  /** Last state of deleted primaries, kept only for Loops with sendDeletes until the call is made. */
  tombstones: Map<string, KubeObject>;
  ownWrites: OwnWrites;
  /** Answers kept after their writes conflicted, re-applied when only bookkeeping changed. */
  replays: ConflictReplays;
}

/** Where the Loop's calls go. */
export interface LoopFunction {
  /** spec.function.url, or what spec.function.ref resolves to (undefined: send nothing). */
  url: () => string | undefined;
  /** The Loop's shadow and canary, when it has either. */
  versions?: FunctionVersions;
  /** The Loop's batching invoker (call-batcher.ts); deps.invoke when its calls are not batched. */
  invoke?: FunctionInvoker | undefined;
}

/** One Loop's state as its runner lends it to reconcileKey. */
export interface ReconcileScope {
  loop: LoopConfig;
  deps: ReconcileDeps;
  queue: WorkQueue<Trigger>;
  caches: LoopCaches;
  memory: KeyMemory;
  function: LoopFunction;
}
