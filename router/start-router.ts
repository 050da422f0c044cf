// startRouter: the programmatic entry point used by `kubeloop router`, `kubeloop dev`, tests and benchmarks;
// it wires the stages together (its options and handle: router-options.ts).
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { ResourceDiscovery } from '../lib/kube/discovery.ts';
import { KubeClient } from '../lib/kube/kube-client.ts';
import { createLogger } from '../lib/observability/logger.ts';
import { createHttpInvoker, type FunctionInvoker } from './reconcile/dispatch.ts';
import { clusterAddressGuard, type ApiServerEndpoints } from '../lib/function-client/cluster-addresses.ts';
import { serviceAddressResolver } from '../lib/function-client/service-address.ts';
import { DEFAULT_QUEUE_BACKOFF } from './base/work-queue.ts';
import { EventRecorder } from './apply/event-recorder.ts';
import { FixtureRecorder } from './reconcile/fixture-recorder.ts';
import { ShadowPairs } from './reconcile/shadow-pairs.ts';
import { InformerRegistry, type InformerLease } from './intake/informer-registry.ts';
import { LeaderElector } from './leader-election.ts';
import { DEFAULT_ROUTER_RATE_LIMIT, DEFAULT_HTTP2_WRITES, type LeaderElectionConfig, type Router, type RouterOptions, type ShardingConfig } from './router-options.ts';
import { LoopController } from './loops/loop-controller.ts';
import type { KindRef } from '../api/meta.ts';
import type { LoopRunner } from './intake/loop-runner.ts';
import { createRouterMetrics, restClientObserver, type RouterMetrics } from './base/router-metrics.ts';
import { DEFAULT_FUNCTION_URL_POLICY } from '../lib/config/function-url-policy.ts';
import { ShardMember } from './sharding/shard-member.ts';
import { createShardMetrics } from './sharding/shard-metrics.ts';
import { ThrottleMonitor } from './loops/throttle-monitor.ts';
import { watchTenantWeights } from './loops/tenant-weight-watch.ts';
import { createFairness, functionConnections, type Fairness } from './base/fairness.ts';
import { DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT, RequestByteBudget } from './base/request-byte-budget.ts';
import { tenantLabels } from './base/tenant-metrics.ts';
import { DEFAULT_HISTORY_LIMITS, FlightRecorder } from './reconcile/flight-recorder.ts';
import { HistoryFileWriter, type DropReason, type HistoryFileSettings } from './history/history-files.ts';
import { shardSlot } from '../lib/kube/shard-selector.ts';
import { watchTimeoutsOf } from '../lib/kube/watch-watchdog.ts';

export type { LeaderElectionConfig, Router, RouterOptions, ShardingConfig } from './router-options.ts';

/** What the router shares across leadership terms: its clients, the function invoker, events, the recorder. */
interface RouterDeps {
  options: RouterOptions;
  identity: string;
  logger: Logger;
  metrics: RouterMetrics;
  client: KubeClient;
  discovery: ResourceDiscovery;
  invoke: FunctionInvoker;
  /** Set when the router calls functions over HTTP itself (no `invoke` option); closed on stop. */
  httpInvoker?: ReturnType<typeof createHttpInvoker>;
  /** The API server's addresses, refreshed, refused to function calls. */
  apiServer?: ApiServerEndpoints;
  /** Their first reading, made while the Loops start (function calls wait for it; startRouter too, for its error). */
  apiServerRead?: Promise<void>;
  events: EventRecorder;
  recorder?: FixtureRecorder;
  history: FlightRecorder;
  /** The history files' writer; flushed and closed on stop. */
  historyFiles?: HistoryFileWriter;
  /** A running Loop by id, once the router is assembled (the history files name each entry's kind). */
  runner: (id: string) => LoopRunner | undefined;
  /** With sharding: this replica's membership, which gates every key. */
  shard?: ShardMember;
  fairness: Fairness;
  requestBytes: RequestByteBudget;
}

async function connectRouter(options: RouterOptions): Promise<RouterDeps> {
  const identity = options.identity ?? `${hostname()}-${process.pid}`;
  const logger = options.logger ?? createLogger({ name: 'router' });
  const metrics = options.metrics ?? createRouterMetrics();
  const rateLimit = options.rateLimit ?? DEFAULT_ROUTER_RATE_LIMIT;
  const client = await KubeClient.fromKubeConfig(options.kubeConfig, { rateLimit, onRequest: restClientObserver(metrics), http2Writes: options.http2Writes ?? DEFAULT_HTTP2_WRITES });
  const discovery = new ResourceDiscovery(client);
  let apiServer: ApiServerEndpoints | undefined;
  let apiServerRead: Promise<void> | undefined;
  let httpInvoker: ReturnType<typeof createHttpInvoker> | undefined;
  if (!options.invoke) {
    // Where function calls may connect: checked at connect time on the resolved address and everywhere the
    // URL's Service leads; loopback only where the URL policy allows it (dev).
    const urlPolicy = options.urlPolicy ?? DEFAULT_FUNCTION_URL_POLICY;
    const guarded = clusterAddressGuard({
      client,
      clusterDomain: urlPolicy.clusterDomain,
      allowLoopback: urlPolicy.allowLoopback,
      ...(options.deniedEndpoints ? { denied: options.deniedEndpoints } : {}),
      ...(options.connectServicesTo ? { resolve: serviceAddressResolver({ clusterDomain: urlPolicy.clusterDomain, address: options.connectServicesTo }) } : {}),
    });
    apiServer = guarded.apiServer;
    // Not awaited here: discovery, the access reviews and the informers' lists need none of it, only calls do.
    apiServerRead = apiServer.start();
    const addressGuard = guarded.guard;
    const connections = functionConnections(options.fairness);
    httpInvoker = createHttpInvoker({ maxRetryAfterMs: DEFAULT_QUEUE_BACKOFF.maxMs, ...(connections === undefined ? {} : { connections }), ...options.dispatch, addressGuard, ready: apiServerRead });
  }
  const invoke = options.invoke ?? httpInvoker!;
  const recorder = options.recordDir ? new FixtureRecorder(options.recordDir) : undefined;
  // The files name each entry's kind, the Loop's `for`: looked up when an entry is written, the router assembled by then.
  const historyFiles = options.historyFiles ? historyFileWriter(options.historyFiles, identity, logger, metrics, (loop) => deps.runner(loop)?.loop.for) : undefined;
  const history = new FlightRecorder(options.history ?? DEFAULT_HISTORY_LIMITS, historyFiles);
  const fairness = createFairness(options.fairness, metrics.registry, metrics.loopLabel);
  const tenants = tenantLabels(options.fairness ? options.fairness.maxLabelledTenants : undefined);
  const events = new EventRecorder({
    client,
    controller: 'kubeloop.dev/router',
    instance: identity,
    logger,
    weightOf: (tenant) => fairness.weights.weightOf(tenant),
    onDropped: (tenant, source) => metrics.eventsDropped.inc({ tenant: tenants.of(tenant), source }),
  });
  const requestBytes = new RequestByteBudget(options.maxRequestBytesInFlight ?? DEFAULT_MAX_REQUEST_BYTES_IN_FLIGHT, (tenant) => fairness.weights.weightOf(tenant), (tenant, delta) =>
    metrics.requestBytesInFlight.inc({ tenant: tenants.of(tenant) }, delta),
  );
  const deps: RouterDeps = { options, identity, logger, metrics, client, discovery, invoke, httpInvoker, apiServer, ...(apiServerRead ? { apiServerRead } : {}), events, recorder, history, ...(historyFiles ? { historyFiles } : {}), runner: () => undefined, fairness, requestBytes };
  return deps;
}

function historyFileWriter(settings: HistoryFileSettings, router: string, logger: Logger, metrics: RouterMetrics, kindOf: (loop: string) => KindRef | undefined): HistoryFileWriter {
  const { historyFileLines, historyFileDropped } = metrics;
  for (const reason of ['error', 'behind', 'too-large'] satisfies DropReason[]) historyFileDropped.inc({ reason }, 0);
  return new HistoryFileWriter(settings, {
    router,
    logger: logger.child({ component: 'history-files' }),
    metrics: { written: (n) => historyFileLines.inc(n), dropped: (reason, n) => historyFileDropped.inc({ reason }, n) },
    kindOf,
  });
}

function createLoopController(deps: RouterDeps, registry: InformerRegistry): LoopController {
  const { options, client, discovery, invoke, events, metrics, logger, recorder } = deps;
  // Under the shared budget no cap of a Loop's own unless asked; without it, the launcher's 50/100 per Loop.
  const loopRateLimit = options.loopRateLimit ?? (deps.fairness.budget ? { qps: 0, burst: 1 } : undefined);
  return new LoopController({
    registry,
    client,
    logger,
    inline: options.loops,
    loopSelector: options.loopSelector,
    ...(loopRateLimit ? { loopRateLimit } : {}),
    ...(deps.fairness.budget ? { budget: deps.fairness.budget } : {}),
    ...(options.urlPolicy ? { urlPolicy: options.urlPolicy } : {}),
    ...(options.accessReviewIntervalMs ? { accessReviewIntervalMs: options.accessReviewIntervalMs } : {}),
    watchRbac: true,
    ...(options.maxLoopsPerTenant !== undefined ? { maxLoopsPerTenant: options.maxLoopsPerTenant } : {}),
    ...(options.tenantLoopStarts ? { tenantLoopStarts: options.tenantLoopStarts } : {}),
    runnerDeps: {
      client,
      discovery,
      registry,
      invoke,
      events,
      metrics,
      logger,
      recorder,
      ...(options.shadowFixturesDir ? { shadowPairs: new ShadowPairs(options.shadowFixturesDir) } : {}),
      history: deps.history,
      expectationsTimeoutMs: options.expectationsTimeoutMs,
      ...(deps.fairness.scheduler ? { scheduler: deps.fairness.scheduler } : {}),
      ...(deps.shard ? { shard: deps.shard } : {}),
      ...(options.minRequeueMs !== undefined ? { minRequeueMs: options.minRequeueMs } : {}),
      ...(options.requestCaps ? { requestCaps: options.requestCaps } : {}),
      requestBytes: deps.requestBytes,
      // The first write (a pod's patch) would otherwise open its session: a TLS handshake on the first label's path.
      warmWrites: () => client.warm(),
    },
  });
}

/** The Loops of one leadership term: fresh informers and controller on start, all dropped on stop. */
class LeaderTerm {
  controller: LoopController | undefined;
  started = false;
  private throttle: ThrottleMonitor | undefined;
  private weightWatch: InformerLease | undefined;
  private registry: InformerRegistry | undefined;

  constructor(private readonly deps: RouterDeps) {}

  async start(): Promise<void> {
    const { client, discovery, logger, metrics, options } = this.deps;
    this.registry = new InformerRegistry({
      client,
      discovery,
      logger,
      metrics,
      events: this.deps.events,
      ...watchTimeoutsOf(options),
      ...(options.watchList !== undefined ? { watchList: options.watchList } : {}),
      ...(options.maxObjectValues !== undefined ? { maxObjectValues: options.maxObjectValues } : {}),
      ...(options.clusterWideWatches ? { clusterWideWatches: options.clusterWideWatches } : {}),
      ...(options.accessReviewIntervalMs ? { clusterWideRecheckMs: options.accessReviewIntervalMs } : {}),
      ...(options.fairness && options.fairness.maxLabelledTenants !== undefined ? { maxLabelledTenants: options.fairness.maxLabelledTenants } : {}),
    });
    const controller = (this.controller = createLoopController(this.deps, this.registry));
    await controller.start();
    const { scheduler, budget, weights, throttleWindowMs } = this.deps.fairness;
    if (scheduler || budget) {
      this.weightWatch = await watchTenantWeights(this.registry, weights, logger);
      this.throttle = new ThrottleMonitor({
        ...(scheduler ? { maxCallsInFlight: scheduler.capacity } : {}),
        ...(budget ? { apiQps: budget.qps } : {}),
        weightOf: (tenant) => weights.weightOf(tenant),
        loops: () => controller.throttleSources(),
        report: (name, condition) => controller.setThrottled(name, condition),
        ...(throttleWindowMs ? { windowMs: throttleWindowMs } : {}),
      });
      this.throttle.start();
    }
    this.started = true;
  }

  async stop(): Promise<void> {
    const c = this.controller;
    const r = this.registry;
    this.controller = undefined;
    this.registry = undefined;
    this.started = false;
    this.throttle?.stop();
    await this.weightWatch?.release();
    this.weightWatch = undefined;
    await c?.stop();
    await r?.stopAll();
  }
}

interface Election {
  elector: LeaderElector;
  /** Leader election has its own connections and limiter: a busy router must never miss its lease renewal. */
  client: KubeClient;
}

async function startElection(deps: RouterDeps, le: LeaderElectionConfig, term: LeaderTerm): Promise<Election> {
  const { metrics } = deps;
  const client = await KubeClient.fromKubeConfig(deps.options.kubeConfig, { rateLimit: { qps: 5, burst: 10 }, onRequest: restClientObserver(metrics) });
  const leaseName = le.name ?? 'kubeloop-router';
  metrics.leader.set({ name: leaseName }, 0);
  const elector = new LeaderElector({
    client,
    namespace: le.namespace,
    name: leaseName,
    identity: deps.identity,
    ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
    ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
    ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
    logger: deps.logger,
    onStartedLeading: async () => {
      metrics.leader.set({ name: leaseName }, 1);
      await term.start();
    },
    onStoppedLeading: async () => {
      metrics.leader.set({ name: leaseName }, 0);
      await term.stop();
    },
  });
  elector.start();
  return { elector, client };
}

/** A member of the shard group with its own client (and limiter), like leader election. */
async function joinShard(deps: RouterDeps, sharding: ShardingConfig, term: LeaderTerm): Promise<{ member: ShardMember; client: KubeClient }> {
  const client = await KubeClient.fromKubeConfig(deps.options.kubeConfig, { rateLimit: { qps: 5, burst: 10 }, onRequest: restClientObserver(deps.metrics) });
  const member = new ShardMember({
    client,
    namespace: sharding.namespace,
    group: sharding.group ?? 'kubeloop-router',
    identity: deps.identity,
    ...(sharding.serverSide === false ? { serverSide: false } : {}),
    ...(sharding.leaseDurationMs ? { leaseDurationMs: sharding.leaseDurationMs } : {}),
    ...(sharding.renewDeadlineMs ? { renewDeadlineMs: sharding.renewDeadlineMs } : {}),
    ...(sharding.retryPeriodMs ? { retryPeriodMs: sharding.retryPeriodMs } : {}),
    logger: deps.logger,
    metrics: createShardMetrics(deps.metrics.registry),
    countOwned: (owns) => new Map((term.controller?.runners() ?? []).map((r) => [r.loop.id, r.countOwned(owns)])),
  });
  return { member, client };
}

function routerHandle(deps: RouterDeps, term: LeaderTerm, election: Election | undefined, shardClient?: KubeClient): Router {
  const { identity } = deps;
  const elector = election?.elector;
  return {
    metrics: deps.metrics,
    identity,
    isLeader: () => (elector ? elector.isLeader : true),
    ready: () => (term.controller ? term.started : elector !== undefined),
    waitForLoop: async (name, timeoutMs = 60_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!term.controller) {
        if (Date.now() > deadline) throw new Error(`router ${identity} is not leading; Loop ${name} is not running here`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return term.controller.waitForLoop(name, Math.max(1, deadline - Date.now()));
    },
    loops: () => term.controller?.runners() ?? [],
    shard: () => deps.shard?.status(),
    history: deps.history,
    historyOwner: async (loop, key) => {
      // Sharded: the owner of the slot of the primary's uid (read from the API server when another member holds it).
      const shard = deps.shard;
      const runner = shard ? term.controller?.runner(loop) : undefined;
      const uid = runner ? await runner.primaryUid(key).catch(() => undefined) : undefined;
      const owner = shard ? (uid ? shard.ownerOf(shardSlot(uid)) : undefined) : elector?.leader;
      return owner === identity ? undefined : owner;
    },
    stop: async () => {
      if (elector) await elector.stop();
      else await term.stop();
      // After the runners drained: the others take this member's keys once its Lease is gone.
      await deps.shard?.stop();
      await shardClient?.close();
      deps.apiServer?.stop();
      await deps.httpInvoker?.close();
      await election?.client.close();
      await deps.client.close();
      // After the runners stopped: their last entries are written.
      await deps.historyFiles?.close();
    },
  };
}

export async function startRouter(options: RouterOptions): Promise<Router> {
  if (options.leaderElection && options.sharding) throw new Error('leader election and sharding exclude each other: every sharded member works');
  const deps = await connectRouter(options);
  const term = new LeaderTerm(deps);
  // By id, not a search of every runner: the history files ask once per entry (per reconcile), at 1,000 tenants too.
  deps.runner = (id) => term.controller?.runner(id);
  let election: Election | undefined;
  if (options.sharding) {
    const { member, client } = await joinShard(deps, options.sharding, term);
    deps.shard = member;
    member.start();
    await term.start();
    await deps.apiServerRead;
    return routerHandle(deps, term, undefined, client);
  }
  if (options.leaderElection) {
    election = await startElection(deps, options.leaderElection, term);
  } else {
    // Like controller-runtime without leader election: no leader_election_master_status series.
    await term.start();
  }
  await deps.apiServerRead;
  return routerHandle(deps, term, election);
}
