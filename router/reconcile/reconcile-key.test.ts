import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CONTRACT_API_VERSION, type KubeObject, type ReconcileRequest, type ReconcileResponse, type RequiredResource, type Trigger } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import type { EventRecorder } from '../apply/event-recorder.ts';
import { Expectations } from '../apply/expectations.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { createRouterMetrics } from '../base/router-metrics.ts';
import { ConflictReplays } from './conflict-replay.ts';
import type { DispatchResult } from './dispatch.ts';
import { OwnWrites } from './own-writes.ts';
import { applyQueueStep, reconcileKey } from './reconcile-key.ts';
import type { ReconcileScope } from './reconcile-scope.ts';
import { WorkQueue, type QueueItem } from '../base/work-queue.ts';
import { WorkerTurns } from '../base/worker-turns.ts';

function idleQueue(): WorkQueue<Trigger> {
  return new WorkQueue<Trigger>({ concurrency: 1, process: async () => {}, backoff: { baseMs: 1000, maxMs: 60_000, jitter: 0 } });
}

describe('applyQueueStep', () => {
  it('backs off with a growing delay, counts the failures and reports the delay', async () => {
    const queue = idleQueue();
    expect(applyQueueStep(queue, 'a', { kind: 'backoff' })).toBe(1000);
    expect(applyQueueStep(queue, 'a', { kind: 'backoff' })).toBe(2000);
    expect(queue.failures('a')).toBe(2);
    expect(queue.delayed).toBe(1);
    await queue.shutdown();
  });

  it('forgets the failures on forget, and keeps them while waiting out a named delay', async () => {
    const queue = idleQueue();
    applyQueueStep(queue, 'a', { kind: 'backoff' });
    expect(applyQueueStep(queue, 'a', { kind: 'requeue-after', delayMs: 5000 })).toBeUndefined();
    expect(queue.failures('a')).toBe(1);
    applyQueueStep(queue, 'a', { kind: 'forget-and-requeue-after', delayMs: 5000 });
    expect(queue.failures('a')).toBe(0);
    expect(queue.delayed).toBe(1);
    await queue.shutdown();
  });

  it('leaves the queue alone on wait', async () => {
    const queue = idleQueue();
    applyQueueStep(queue, 'a', { kind: 'wait' });
    expect([queue.depth, queue.delayed, queue.failures('a')]).toEqual([0, 0, 0]);
    await queue.shutdown();
  });
});

const secrets: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };
const app: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'a', uid: 'u1', resourceVersion: '1' } };
const db: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'a' } };
const credentials: RequiredResource = { name: 'credentials', apiVersion: 'v1', kind: 'Secret', names: ['db'] };
const item: QueueItem<Trigger> = { key: 'a/app', payload: { type: 'ADDED' }, priority: 'high', enqueuedAt: 0 };

/** An answer without actions. */
const ok = (fields: Partial<ReconcileResponse> = {}): DispatchResult => ({ kind: 'ok', status: 200, response: { apiVersion: CONTRACT_API_VERSION, kind: 'ReconcileResponse', actions: [], ...fields } });

/** A Loop's scope with one cached primary, whose function answers as `answer` says; the API holds one Secret. */
function scopeAnswering(answer: (request: ReconcileRequest) => DispatchResult) {
  const sent: ReconcileRequest[] = [];
  const loop = parseLoop({ kind: 'ClusterLoop', metadata: { name: 'l' }, spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, serviceAccount: { namespace: 'a', name: 's' }, function: { url: 'http://f.team.svc:80/' } } });
  const invoke = async (request: ReconcileRequest): Promise<DispatchResult> => {
    sent.push(request);
    return answer(request);
  };
  const scope: ReconcileScope = {
    loop,
    deps: {
      // An answer without actions writes nothing: the client only reads the required Secret.
      client: { getIfExists: async ({ path }: { path: string }) => (path === '/api/v1/namespaces/a/secrets/db' ? db : undefined) } as unknown as KubeClient,
      discovery: { resolve: async () => secrets } as unknown as ResourceDiscovery,
      invoke,
      events: { record: vi.fn() } as unknown as EventRecorder,
      metrics: createRouterMetrics(createMetricsRegistry({ defaultMetrics: false })),
      logger: pino({ level: 'silent' }),
    },
    queue: idleQueue(),
    caches: {
      primaries: { get: (key) => (key === 'a/app' ? app : undefined), list: () => [app], byIndex: () => [], size: 1 },
      owned: [],
      related: [],
      lookup: () => undefined,
      lookupChild: () => undefined,
    },
    memory: { expectations: new Expectations(60_000), tombstones: new Map(), ownWrites: new OwnWrites(), replays: new ConflictReplays() },
    function: { url: () => 'http://f.team.svc:80/' },
  };
  return { scope, sent };
}

describe('reconcileKey and requires', () => {
  it('returns what the settled answer required, and a reconcile given them sends them in its first round', async () => {
    const { scope, sent } = scopeAnswering(() => ok({ requires: [credentials] }));
    const first = await reconcileKey(scope, item);
    expect(first.result).toBe('success');
    expect(first.required?.entries).toEqual([credentials]);
    expect(first.required?.resolved).toMatchObject([{ name: 'credentials', kind: 'Secret.v1', namespace: 'a', target: { kind: 'names', keys: ['a/db'] } }]);
    expect(sent).toHaveLength(2);
    const second = await reconcileKey(scope, item, { required: first.required?.entries });
    expect(sent).toHaveLength(3);
    expect(sent[2]?.related?.credentials?.map((o) => o.metadata?.name)).toEqual(['db']);
    expect(second.required?.entries).toEqual([credentials]);
    await scope.queue.shutdown();
  });

  it('returns [] once an answer requires nothing, and nothing (what was required stays) when the call fails', async () => {
    let fail = false;
    const { scope } = scopeAnswering(() => (fail ? { kind: 'failed', status: undefined, reason: 'Unreachable', message: 'down' } : ok()));
    expect((await reconcileKey(scope, item, { required: [credentials] })).required).toEqual({ entries: [], resolved: [] });
    fail = true;
    const failed = await reconcileKey(scope, item, { required: [credentials] });
    expect(failed.result).toBe('error');
    expect(failed).not.toHaveProperty('required');
    await scope.queue.shutdown();
  });
});

describe('reconcileKey in a worker carrying other keys', () => {
  const tellsWhy = (): DispatchResult => ok({ actions: [{ op: 'event', type: 'Normal', reason: 'Seen', message: 'seen' }] });

  it('writes its answer in its turn, after the worker\'s earlier keys', async () => {
    const { scope } = scopeAnswering(tellsWhy);
    const turns = new WorkerTurns(2);
    const earlier = await turns.turn();
    const reconciled = reconcileKey(scope, item, { share: turns });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(scope.deps.events.record).not.toHaveBeenCalled();
    earlier();
    expect((await reconciled).result).toBe('success');
    expect(scope.deps.events.record).toHaveBeenCalledTimes(1);
    await scope.queue.shutdown();
  });
});
