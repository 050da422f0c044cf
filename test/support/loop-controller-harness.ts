// The Loop controller on in-memory informers with an in-memory launcher, for the controller's unit tests
// (router/loops/loop-controller*.test.ts): reviews, launches, status writes and events are counted and recorded.
import { pino } from 'pino';
import type { LoopSpec } from '../../api/loop.ts';
import { CONTRACT_API_VERSION, type KubeObject } from '../../lib/contract/types.ts';
import { UnknownKindError, type ResourceDiscovery } from '../../lib/kube/discovery.ts';
import type { KubeClient, KubeRequest } from '../../lib/kube/kube-client.ts';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import type { EventRecorder, RecordedEvent } from '../../router/apply/event-recorder.ts';
import { createRouterMetrics } from '../../router/base/router-metrics.ts';
import { LoopRunner } from '../../router/intake/loop-runner.ts';
import { MemoryInformers, RBAC_RESOURCES, TEST_RESOURCES } from './memory-informers.ts';
import type { FunctionInvoker } from '../../router/reconcile/dispatch.ts';
import type { AccessVerdict } from '../../lib/kube/access-review.ts';
import { LoopController } from '../../router/loops/loop-controller.ts';
import type { LaunchHooks, LoopLauncher } from '../../router/loops/loop-launcher.ts';
import { SigningSecretError } from '../../router/loops/signing-key.ts';

export const { podsets, pods, loops } = TEST_RESOURCES;
/** The namespaced Loop kind, and a cluster-scoped kind a namespaced Loop may not name. */
const teamLoops = { ...loops, kind: 'Loop', plural: 'loops', namespaced: true };
export const nodes = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false };
export const WAIT = { timeout: 10_000, interval: 20 };

export const loopObject = (spec: Partial<LoopSpec> = {}, extra: { generation?: number; labels?: Record<string, string> } = {}): KubeObject =>
  ({
    apiVersion: loops.apiVersion,
    kind: 'ClusterLoop',
    metadata: { name: 'podset', uid: 'uid-loop', generation: extra.generation ?? 1, resourceVersion: String(extra.generation ?? 1), labels: extra.labels },
    spec: {
      for: { apiVersion: podsets.apiVersion, kind: podsets.kind },
      owns: [{ apiVersion: 'v1', kind: 'Pod' }],
      function: { url: 'http://podset.fns.svc:8080/' },
      serviceAccount: { namespace: 'a', name: 'loop' },
      ...spec,
    },
  }) as unknown as KubeObject;

const controllers: LoopController[] = [];
/** Stops every controller the harness made (afterEach). */
export async function stopControllers(): Promise<void> {
  await Promise.all(controllers.splice(0).map((c) => c.stop()));
}

/**
 * A controller watching Loop objects on in-memory informers, with an in-memory launcher: reviews answer
 * `access.denied` (allowed when unset), launches fail while `signing.problem` is set, runners are real
 * LoopRunners calling an in-memory function. Status writes and events are recorded.
 */
export function harness(options: { loopSelector?: { matchLabels: Record<string, string> }; accessReviewIntervalMs?: number; maxLoopsPerTenant?: number; tenantLoopStarts?: { qps: number; burst: number }; watchRbac?: boolean; client?: KubeClient } = {}) {
  const informers = new MemoryInformers([podsets, pods, loops, teamLoops, nodes, ...RBAC_RESOURCES]);
  /** What the controller and its runners did, in order: `acquire <Kind>`, `review <loop>` (asked), `call <name> <trigger>`. */
  const log: string[] = [];
  const acquire = informers.acquire.bind(informers);
  informers.acquire = async (ref) => (log.push(`acquire ${ref.kind}`), acquire(ref));
  for (const kind of [podsets, pods, nodes]) informers.of(kind.apiVersion, kind.kind).sync();
  /** Reviews answer once `hold` resolves (when set), then denied when `denied` is set. */
  const access: { denied?: string; hold?: Promise<void> } = {};
  const signing: { problem?: string; hooks?: LaunchHooks } = {};
  const counts = { reviews: 0, launches: 0, stops: 0, releases: 0 };
  const statuses: unknown[] = [];
  const statusPaths: string[] = [];
  const events: RecordedEvent[] = [];
  /** The loop of each access review, in the order asked. */
  const reviewed: string[] = [];
  const runnerDeps = {
    registry: informers,
    invoke: (async (request) => (log.push(`call ${request.object.metadata?.name} ${request.trigger.type}`), { kind: 'ok', status: 200, response: { apiVersion: CONTRACT_API_VERSION, kind: 'ReconcileResponse', actions: [] } })) as FunctionInvoker,
    client: {} as KubeClient,
    discovery: {
      resolve: async (apiVersion: string, kind: string) => {
        const found = [podsets, pods, nodes].find((r) => r.apiVersion === apiVersion && r.kind === kind);
        if (!found) throw new UnknownKindError(apiVersion, kind, 'not served');
        return found;
      },
    } as unknown as ResourceDiscovery,
    events: { record: (_object: unknown, event: RecordedEvent) => events.push(event) } as unknown as EventRecorder,
    metrics: createRouterMetrics(createMetricsRegistry({ defaultMetrics: false })),
    logger: pino({ level: 'silent' }),
  };
  const launcher: LoopLauncher = {
    async release() {
      counts.releases += 1;
      return 0;
    },
    async review(config): Promise<AccessVerdict> {
      counts.reviews += 1;
      reviewed.push(config.id);
      log.push(`review ${config.id}`);
      await access.hold;
      return access.denied ? { allowed: false, message: access.denied } : { allowed: true };
    },
    async launch(config, hooks) {
      counts.launches += 1;
      if (signing.problem) throw new SigningSecretError(signing.problem);
      const runner = new LoopRunner(config, { ...runnerDeps, onHealth: (_loop, health) => hooks.onHealth(health) });
      return {
        runner,
        followSigningKey: () => (signing.hooks = hooks),
        stop: async () => {
          counts.stops += 1;
          await runner.stop();
        },
      };
    },
  };
  const client = options.client ?? ({ request: async (r: KubeRequest) => statusPaths.push(r.path) && statuses.push(r.body) } as unknown as KubeClient);
  const controller = new LoopController({ runnerDeps, registry: informers, client, logger: runnerDeps.logger, launcher, ...options });
  controllers.push(controller);
  const loopInformer = informers.of(loops.apiVersion, loops.kind);
  const teamLoopInformer = informers.of(teamLoops.apiVersion, teamLoops.kind);
  const start = async () => {
    const started = controller.start();
    loopInformer.sync();
    teamLoopInformer.sync();
    await started;
  };
  const lastReady = () => (statuses.at(-1) as { status: { conditions: Array<{ status: string; reason: string }> } } | undefined)?.status.conditions[0];
  return { controller, informers, log, loopInformer, teamLoopInformer, access, signing, counts, reviewed, statuses, statusPaths, events, start, lastReady, metrics: runnerDeps.metrics };
}
