// `kubeloop router`: runs the event router with its ops server (/healthz, /readyz, /metrics) until SIGTERM;
// exits 2 for a bad setting (a kubeconfig that is missing or wrong), 1 when it cannot start (no API server).
import type { Loop } from '../../api/loop.ts';
import { operatorDenied } from '../../lib/function-client/address-policy.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { loadKubeConfig, type ClusterCredentials } from '../../lib/kube/kube-config.ts';
import { waitForApiServer } from '../../lib/kube/wait-for-api-server.ts';
import { createLogger, type Logger } from '../../lib/observability/logger.ts';
import { startTracing } from '../../lib/observability/tracing.ts';
import { listenNode } from '../../lib/server/node-server.ts';
import { createOpsServer } from '../../lib/server/ops-server.ts';
import { closeOnSignals } from '../../lib/server/shutdown.ts';
import { guardStartUp } from '../../lib/server/start-up-signals.ts';
import { applyHeapGrowingPercent } from '../../lib/server/heap-growing.ts';
import { readRouterConfig, readLoopsFile, ROUTER_USAGE, createRouterMetrics, startRouter, type Router } from '../../router/index.ts';
import { readFile } from 'node:fs/promises';
import { usageFailure } from '../command-args.ts';

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(ROUTER_USAGE);
    return 0;
  }
  let config: RouterConfig;
  try {
    config = readRouterConfig(argv);
    if (config.loopsFile) config = { ...config, loops: await readLoopsFile(config.loopsFile, config.urlPolicy) };
  } catch (error) {
    return usageFailure('router', error);
  }
  // Before anything grows the heap: each major GC from now on sizes old space by it.
  const heapFlag = applyHeapGrowingPercent(config.heapGrowingPercent);
  const logger = createLogger({ name: 'router', level: config.logLevel });
  const tracing = await startTracing(config.tracing, 'kubeloop-router');
  const kubeConfig = await loadKubeConfig({ kubeconfig: config.kubeconfig, context: config.context });
  const metrics = createRouterMetrics(undefined, config.loopMetricsLabels);
  // The ops server starts first so probes answer (not ready) while the router connects and syncs. On node:http,
  // as the function images' server: no framework to load at every start (docs/performance.md).
  const state: { router?: Awaited<ReturnType<typeof startRouter>> } = {};
  const ops = createOpsServer({ logger, metrics: metrics.registry, ready: () => state.router?.ready() ?? false });
  const url = await listenNode(ops.server, { port: config.port, host: config.host });
  // A stop asked for while the router is still connecting ends it cleanly: nothing has been written yet.
  const startUp = guardStartUp('exit');
  let router: Awaited<ReturnType<typeof startRouter>>;
  try {
    router = await startRouterWhenReachable(kubeConfig, config, { logger, metrics });
  } catch (error) {
    // Nothing keeps running after a failed start: the ops server closes and the command exits 1.
    startUp.failed();
    await ops.close();
    await tracing.shutdown();
    throw error;
  }
  state.router = router;
  // Started (it may hold leases and write): a stop from now on is held for router.stop() rather than exiting.
  startUp.hold();
  let historyApi: Awaited<ReturnType<typeof startRouterHistoryApi>> | undefined;
  try {
    historyApi = config.historyApi ? await startRouterHistoryApi(router, kubeConfig, config, logger) : undefined;
  } catch (error) {
    startUp.failed();
    await router.stop();
    await ops.close();
    await tracing.shutdown();
    throw error;
  }
  closeOnSignals(ops, {
    drainDelayMs: config.drainDelaySeconds * 1000,
    exit: (code) => {
      void (historyApi?.close() ?? Promise.resolve())
        .then(() => router.stop())
        .then(() => tracing.shutdown())
        .finally(() => process.exit(code));
    },
  });
  startUp.started();
  logger.info({ ops: url, historyApi: historyApi?.url, identity: router.identity, leaderElect: config.leaderElect, sharding: config.sharding, tracing: tracing.enabled, v8: heapFlag, loops: config.loops ? 'inline' : 'watching Loop objects' }, 'router started');
  return new Promise<number>(() => {});
}

/** The flags and variables read, and the inline Loops of `--loops`. */
type RouterConfig = ReturnType<typeof readRouterConfig> & { loops?: Loop[] };

/** Waits (bounded by --api-timeout-seconds) for the API server to answer, then starts the router. */
async function startRouterWhenReachable(kubeConfig: ClusterCredentials, config: RouterConfig, deps: { logger: Logger; metrics: ReturnType<typeof createRouterMetrics> }) {
  const { logger, metrics } = deps;
  const deadlineMs = config.apiTimeoutSeconds * 1000;
  // Its connect timeout within the deadline: a handshake still pending would outlive the failed command.
  const probe = await KubeClient.fromKubeConfig(kubeConfig, { connectTimeoutMs: Math.min(5_000, deadlineMs) });
  try {
    await waitForApiServer(probe, { deadlineMs, server: kubeConfig.getCurrentCluster()?.server });
  } catch (error) {
    await probe.destroy();
    throw error;
  }
  await probe.close();
  return startRouter({
    kubeConfig,
    logger,
    metrics,
    loops: config.loops,
    ...(config.loopSelector ? { loopSelector: { matchLabels: config.loopSelector } } : {}),
    recordDir: config.recordDir,
    ...(config.shadowFixturesDir ? { shadowFixturesDir: config.shadowFixturesDir } : {}),
    identity: config.identity,
    rateLimit: { qps: config.qps, burst: config.burst },
    http2Writes: config.http2Writes,
    // 0: no cap of its own (its tenant's share governs; without the shared budget, 50/100 per Loop).
    ...(config.loopQps > 0 ? { loopRateLimit: { qps: config.loopQps, burst: config.loopBurst } } : {}),
    fairness: {
      maxCallsInFlight: config.maxCallsInFlight,
      apiRateLimit: { qps: config.fairApiQps, burst: config.fairApiBurst },
      weights: config.tenantWeights,
      maxLabelledTenants: config.tenantMetricsLabels,
    },
    urlPolicy: config.urlPolicy,
    ...(config.connectServicesTo ? { connectServicesTo: config.connectServicesTo } : {}),
    deniedEndpoints: operatorDenied(config.deniedNetworks, config.deniedLoopbackPorts),
    minRequeueMs: config.minRequeueSeconds * 1000,
    ...(config.accessReviewSeconds !== undefined ? { accessReviewIntervalMs: config.accessReviewSeconds * 1000 } : {}),
    maxLoopsPerTenant: config.maxLoopsPerTenant,
    tenantLoopStarts: config.tenantLoopStarts,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    bookmarkedWatchTimeoutSeconds: config.bookmarkedWatchTimeoutSeconds,
    watchSilenceMs: config.watchSilenceSeconds * 1000,
    watchList: config.watchList,
    maxObjectValues: config.maxObjectValues,
    clusterWideWatches: config.clusterWideWatches,
    requestCaps: config.requestCaps,
    maxRequestBytesInFlight: config.maxRequestBytesInFlight,
    expectationsTimeoutMs: config.expectationsTimeoutSeconds * 1000,
    dispatch: { maxActionsPerReply: config.maxActionsPerReply, maxResponseBytes: config.maxReplyBytes, ...(config.functionConnections > 0 ? { connections: config.functionConnections } : {}) },
    ...(config.leaderElect
      ? { leaderElection: { namespace: config.leaseNamespace, name: config.leaseName, leaseDurationMs: config.leaseDurationSeconds * 1000, renewDeadlineMs: config.leaseDurationSeconds * 666 } }
      : {}),
    ...(config.sharding ? { sharding: shardingOptions(config) } : {}),
    ...(config.history ? { history: config.history } : {}),
    ...(config.historyFiles ? { historyFiles: config.historyFiles } : {}),
  });
}

/** The history API on its own HTTPS port, with its own client (its SubjectAccessReviews never wait behind the router's work). */
async function startRouterHistoryApi(router: Router, kubeConfig: ClusterCredentials, config: RouterConfig, logger: Logger) {
  const settings = config.historyApi!;
  const replicated = config.leaderElect || config.sharding;
  const namespace = config.leaseNamespace;
  const [certPem, keyPem] = await Promise.all([readFile(settings.certFile, 'utf8'), readFile(settings.keyFile, 'utf8')]);
  const client = await KubeClient.fromKubeConfig(kubeConfig, { rateLimit: { qps: 20, burst: 40 } });
  try {
    // Loaded here: a router without the history API never loads the framework it is served with.
    const { historySource, startHistoryApi, podPeerResolver } = await import('../../router/history-api.ts');
    // With replicas (leader election, sharding) a request may reach one without the key's history: it forwards to the pod that has it.
    const peers = replicated ? podPeerResolver(client, namespace, settings.port) : undefined;
    const api = await startHistoryApi({
      source: historySource(router),
      client,
      logger: logger.child({ component: 'history-api' }),
      port: settings.port,
      tls: { certPem, keyPem },
      ...(peers ? { peers } : {}),
    });
    return { url: api.url, close: async () => (await api.close(), await client.close()) };
  } catch (error) {
    await client.close();
    throw error;
  }
}

/** client-go's proportions (15 s lease, 10 s renew deadline, 2 s retry) scaled to the lease duration. */
function shardingOptions(config: RouterConfig) {
  const leaseDurationMs = config.leaseDurationSeconds * 1000;
  return { namespace: config.leaseNamespace, group: config.leaseName, serverSide: config.shardingServerSide, leaseDurationMs, renewDeadlineMs: Math.round(leaseDurationMs * (2 / 3)), retryPeriodMs: Math.round(leaseDurationMs / 7.5) };
}
