// `kubeloop router`: runs the event router with its ops server (/healthz, /readyz, /metrics) until SIGTERM.
import { operatorDenied } from '../../lib/function-client/address-policy.ts';
import { loadKubeConfig } from '../../lib/kube/kube-config.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { createServer, listen } from '../../lib/server/create-server.ts';
import { closeOnSignals } from '../../lib/server/shutdown.ts';
import { readRouterConfig, ROUTER_USAGE } from '../../router/router-config.ts';
import { createRouterMetrics } from '../../router/base/router-metrics.ts';
import { startRouter } from '../../router/start-router.ts';
import { usageFailure } from '../command-args.ts';

export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(ROUTER_USAGE);
    return 0;
  }
  let config: ReturnType<typeof readRouterConfig>;
  try {
    config = readRouterConfig(argv);
  } catch (error) {
    return usageFailure('router', error);
  }
  const logger = createLogger({ name: 'router', level: config.logLevel });
  const kubeConfig = await loadKubeConfig({ kubeconfig: config.kubeconfig, context: config.context });
  const metrics = createRouterMetrics();
  // The ops server starts first so probes answer (not ready) while the router connects and syncs.
  const state: { router?: Awaited<ReturnType<typeof startRouter>> } = {};
  const ops = createServer({ logger, metrics: metrics.registry, bodyLimitBytes: config.bodyLimitBytes, ready: () => state.router?.ready() ?? false });
  const url = await listen(ops.app, { port: config.port, host: config.host });
  // A stop asked for while the router is still connecting ends it cleanly: nothing has been written yet.
  const stopWhileStarting = () => process.exit(0);
  process.once('SIGTERM', stopWhileStarting).once('SIGINT', stopWhileStarting);
  const router = await startRouter({
    kubeConfig,
    logger,
    metrics,
    loops: config.loops,
    ...(config.loopSelector ? { loopSelector: { matchLabels: config.loopSelector } } : {}),
    recordDir: config.recordDir,
    identity: config.identity,
    rateLimit: { qps: config.qps, burst: config.burst },
    loopRateLimit: { qps: config.loopQps, burst: config.loopBurst },
    urlPolicy: config.urlPolicy,
    ...(config.connectServicesTo ? { connectServicesTo: config.connectServicesTo } : {}),
    deniedEndpoints: operatorDenied(config.deniedNetworks, config.deniedLoopbackPorts),
    minRequeueMs: config.minRequeueSeconds * 1000,
    accessReviewIntervalMs: config.accessReviewSeconds * 1000,
    watchTimeoutSeconds: config.watchTimeoutSeconds,
    expectationsTimeoutMs: config.expectationsTimeoutSeconds * 1000,
    dispatch: { maxActionsPerReply: config.maxActionsPerReply, maxResponseBytes: config.maxReplyBytes },
    ...(config.leaderElect
      ? { leaderElection: { namespace: config.leaseNamespace, name: config.leaseName, leaseDurationMs: config.leaseDurationSeconds * 1000, renewDeadlineMs: config.leaseDurationSeconds * 666 } }
      : {}),
    ...(config.sharding ? { sharding: shardingOptions(config) } : {}),
  });
  state.router = router;
  process.off('SIGTERM', stopWhileStarting).off('SIGINT', stopWhileStarting);
  logger.info({ ops: url, identity: router.identity, leaderElect: config.leaderElect, sharding: config.sharding, loops: config.loops ? 'inline' : 'watching Loop objects' }, 'router started');
  closeOnSignals(ops, {
    drainDelayMs: config.drainDelaySeconds * 1000,
    exit: (code) => {
      void router.stop().finally(() => process.exit(code));
    },
  });
  return new Promise<number>(() => {});
}

/** client-go's proportions (15 s lease, 10 s renew deadline, 2 s retry) scaled to the lease duration. */
function shardingOptions(config: ReturnType<typeof readRouterConfig>) {
  const leaseDurationMs = config.leaseDurationSeconds * 1000;
  return { namespace: config.leaseNamespace, group: config.leaseName, leaseDurationMs, renewDeadlineMs: Math.round(leaseDurationMs * (2 / 3)), retryPeriodMs: Math.round(leaseDurationMs / 7.5) };
}
