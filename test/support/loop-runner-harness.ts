// The LoopRunner unit tests' harness: a runner of a PodSet Loop (owning Pods) on in-memory informers, calling an
// in-memory function, and the objects they put (router/intake/loop-runner*.test.ts).
import { pino } from 'pino';
import { expect, vi } from 'vitest';
import type { LoopSpec } from '../../api/loop.ts';
import { CONTRACT_API_VERSION, type KubeObject, type ReconcileRequest, type ReconcileResponse } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import type { EventRecorder } from '../../router/apply/event-recorder.ts';
import { parseLoop } from '../../router/base/loop-spec.ts';
import { createRouterMetrics } from '../../router/base/router-metrics.ts';
import type { FunctionOrigin } from '../../lib/function-client/function-client.ts';
import type { DispatchResult, InvokeOptions } from '../../router/reconcile/dispatch.ts';
import { LoopRunner, type LoopHealth, type LoopRunnerDeps } from '../../router/intake/loop-runner.ts';
import { MemoryInformers, TEST_RESOURCES } from './memory-informers.ts';

export const { podsets: PODSETS, pods: PODS, services: SERVICES } = TEST_RESOURCES;

export const podSet = (name: string, extra: { namespace?: string; labels?: Record<string, string>; generation?: number; resourceVersion?: string; status?: unknown } = {}): KubeObject =>
  ({
    apiVersion: PODSETS.apiVersion,
    kind: PODSETS.kind,
    metadata: { name, namespace: extra.namespace ?? 'a', uid: `uid-${name}`, labels: extra.labels, generation: extra.generation ?? 1, resourceVersion: extra.resourceVersion ?? '1' },
    ...(extra.status ? { status: extra.status } : {}),
  }) as KubeObject;

export const pod = (name: string, owner: KubeObject): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: owner.metadata?.namespace,
    uid: `uid-${name}`,
    resourceVersion: '1',
    ownerReferences: [{ apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true }],
  },
});

/** Lets pending promise callbacks run (the runner's sync handshake); no timing involved. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const runners: LoopRunner[] = [];
/** Stops every runner a harness started (each test file's afterEach). */
export async function stopRunners(): Promise<void> {
  await Promise.all(runners.splice(0).map((r) => r.stop()));
}

/** A runner on in-memory informers, calling an in-memory function that answers with no actions (and with `answer`'s fields). */
export function harness(spec: Partial<LoopSpec> = {}, answer: (request: ReconcileRequest) => Partial<ReconcileResponse> = () => ({}), api: Pick<LoopRunnerDeps, 'client' | 'discovery'> = { client: {} as KubeClient, discovery: {} as ResourceDiscovery }) {
  const informers = new MemoryInformers([PODSETS, PODS, SERVICES]);
  const registry = createMetricsRegistry({ defaultMetrics: false });
  const calls: Array<{ request: ReconcileRequest; url: string }> = [];
  /** The function connections opened ahead of calls (warm-ahead.ts). */
  const preconnects: FunctionOrigin[] = [];
  const health: LoopHealth[] = [];
  const config = parseLoop({
    metadata: { name: 'podset' },
    spec: {
      for: { apiVersion: PODSETS.apiVersion, kind: PODSETS.kind },
      owns: [{ apiVersion: 'v1', kind: 'Pod' }],
      function: { url: 'http://podset.fns.svc:8080/' },
      serviceAccount: { namespace: 'a', name: 'loop' },
      ...spec,
    },
  });
  const runner = new LoopRunner(config, {
    registry: informers,
    invoke: Object.assign(
      async (request: ReconcileRequest, options: InvokeOptions): Promise<DispatchResult> => {
        calls.push({ request, url: options.url });
        return { kind: 'ok', status: 200, response: { apiVersion: CONTRACT_API_VERSION, kind: 'ReconcileResponse', actions: [], ...answer(request) } };
      },
      { preconnect: (origin: FunctionOrigin) => void preconnects.push(origin) },
    ),
    // An answer without actions writes nothing: events are never used, and the client and discovery only
    // to read what an answer requires.
    ...api,
    events: { record: vi.fn() } as unknown as EventRecorder,
    metrics: createRouterMetrics(registry),
    logger: pino({ level: 'silent' }),
    onHealth: (_loop, h) => health.push(h),
  });
  runners.push(runner);
  const podsets = informers.of(PODSETS.apiVersion, PODSETS.kind);
  const pods = informers.of('v1', 'Pod');
  const services = informers.of('v1', 'Service');
  /** Starts the runner and completes every list. */
  const started = async () => {
    await runner.start();
    for (const informer of [podsets, pods, services]) informer.sync();
    await runner.synced;
  };
  const callsFor = (name: string) => calls.filter((c) => c.request.object.metadata?.name === name);
  /** Waits until n calls were made and the runner has nothing queued or in flight. */
  const calledAndIdle = async (n: number) => {
    await vi.waitFor(() => expect(calls).toHaveLength(n));
    await vi.waitFor(() => expect(runner.stats().pendingKeys).toBe(0));
  };
  /** Reconciles run (controller_runtime_reconcile_total): passes through the queue, whatever they ended in. */
  const reconciles = async () => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'controller_runtime_reconcile_total');
    return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
  };
  return { runner, informers, podsets, pods, services, calls, preconnects, callsFor, health, started, calledAndIdle, reconciles };
}

