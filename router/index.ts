// Public surface of the router, what the CLI and tools take from it (as controller-runtime's pkg/manager and
// pkg/builder): start it and read its flags, describe Loops, plug in an invoker, read its metrics and history,
// and the pure pieces `kubeloop render`, `diff` and `history` run the way the router does.
export { startRouter, type Router, type RouterOptions, type LeaderElectionConfig, type ShardingConfig } from './start-router.ts';
export { readRouterConfig, readLoopsFile, ROUTER_USAGE, type RouterConfig } from './router-config.ts';
export { createRouterMetrics, REST_CLIENT_BUCKETS, WORKQUEUE_BUCKETS, type RouterMetrics } from './base/router-metrics.ts';
export { createHttpInvoker, type DispatchResult, type FunctionInvoker } from './reconcile/dispatch.ts';
export { DEFAULT_FAIR_API_LIMIT } from './base/fairness.ts';

// Loops as the router reads them.
export { parseLoop, LoopSpecError, type LoopConfig } from './base/loop-spec.ts';
export { selectsPrimary, updateTriggers } from './base/predicates.ts';
export { parseRelated, relationWatchScope, RelatedSpecError } from './base/related-relation.ts';
export type { StoreView } from './base/informer-view.ts';
export { readSigningKeys, SigningSecretError } from './loops/signing-key.ts';

// One reconcile, the router's way: the request's related objects, requirements, the finalizer phase, the writes.
export { relatedObjectsOf, type RelatedStore } from './reconcile/related-objects.ts';
export { REQUIRES_LIMITS, sameRequirements } from './reconcile/required-objects.ts';
export { finalizerPhase } from './reconcile/reconcile-decision.ts';
export { appliedObject, namespaceFor, namespaceOf } from './apply/action-target.ts';
export { prepareChild, statusPatch, withResourceVersionTest } from './apply/patch-building.ts';
export { primaryPatch } from './apply/seen-metadata.ts';

// The write path and the shard membership alone, for the benchmarks that measure them in one process.
export { applyActions, type ApplyContext } from './apply/apply-actions.ts';
export { AppliedWrites } from './apply/applied-writes.ts';
export type { EventRecorder } from './apply/event-recorder.ts';
export { Expectations } from './apply/expectations.ts';
export { MemberSet } from './sharding/member-set.ts';

// The flight recorder and its history documents (`kubeloop history`, the console); the API server that serves them
// is router/history-api.ts, loaded only by a router that serves it.
export { describeWatchEvent, watchEvent } from './base/watch-events.ts';
export { describeAction, ReconcileTrace } from './reconcile/reconcile-trace.ts';
export { MAX_RECORDED_LINES, type ReconcileRecord, type WriteRecord } from './reconcile/flight-recorder.ts';
export { HISTORY_GROUP, HISTORY_VERSION, historyRequest, type ObjectHistory } from './history/history-documents.ts';
export { objectHistoryFromLines, readHistoryFiles } from './history/history-file-reader.ts';
