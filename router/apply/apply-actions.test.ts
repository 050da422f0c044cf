import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { Action, KubeObject } from '../../lib/contract/types.ts';
import type { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { KubeApiError, type KubeRequest } from '../../lib/kube/kube-client.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { applyActions, type ApplyContext } from './apply-actions.ts';
import type { EventRecorder } from './event-recorder.ts';
import { Expectations } from './expectations.ts';
import { AppliedWrites } from './applied-writes.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { createRouterMetrics } from '../base/router-metrics.ts';
import { seenMetadataTests } from './seen-metadata.ts';
import { jsonAnswering } from '../../test/support/json-writes-client.ts';

const pods: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const configMaps: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const loop = parseLoop({
  metadata: { name: 'cm' },
  spec: {
    for: { apiVersion: 'v1', kind: 'ConfigMap' },
    owns: [{ apiVersion: 'v1', kind: 'Pod' }],
    serviceAccount: { namespace: 'a', name: 'loop' },
    function: { url: 'http://fn.a.svc/' },
  },
});
const primary: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'a', uid: 'u-cm', resourceVersion: '1' } };

function context(answer: (request: KubeRequest) => unknown = () => ({})) {
  const resolve = vi.fn(async (apiVersion: string, kind: string) => {
    const found = [pods, configMaps].find((r) => r.apiVersion === apiVersion && r.kind === kind);
    if (!found) throw new Error(`discovery asked about ${kind} ${apiVersion}`);
    return found;
  });
  const request = vi.fn(async (r: KubeRequest) => answer(r));
  const record = vi.fn();
  const ctx: ApplyContext = {
    client: jsonAnswering(request),
    discovery: { resolve } as unknown as ResourceDiscovery,
    loop,
    primary,
    ownerKey: 'a/cm',
    lookup: () => undefined,
    expectations: new Expectations(60_000),
    events: { record } as unknown as EventRecorder,
    metrics: createRouterMetrics(),
    logger: pino({ level: 'silent' }),
  };
  return { ctx, resolve, request, record };
}

describe('applyActions authority', () => {
  it('refuses unknown and malformed apiVersions before any discovery lookup or API request', async () => {
    const { ctx, resolve, request, record } = context();
    const actions: Action[] = [
      { op: 'create', object: { apiVersion: 'made.up.example.com/v1', kind: 'Widget', metadata: { name: 'w' } } },
      { op: 'apply', object: { apiVersion: '../../../api/v1', kind: 'Pod', metadata: { name: 'p' } } },
      { op: 'patch', target: { apiVersion: 'other.example.com/v7', kind: 'Pod', namespace: 'a', name: 'p' }, patch: [{ op: 'remove', path: '/x' }] },
      { op: 'delete', target: { apiVersion: 'v2', kind: 'Secret', namespace: 'a', name: 's' } },
    ];
    expect(await applyActions(ctx, actions)).toEqual({ result: 'done', refused: 4 });
    expect(resolve).not.toHaveBeenCalled();
    expect(request).not.toHaveBeenCalled();
    expect(record.mock.calls.map(([, e]) => (e as { reason: string }).reason)).toEqual(['ActionRefused', 'ActionRefused', 'ActionRefused', 'ActionRefused']);
  });

  it('reads a child the cache does not hold and refuses it when another controller owns it', async () => {
    const theirs = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-rs', controller: true }] } };
    const { ctx, request } = context((r) => {
      if (r.method === undefined || r.method === 'GET') return theirs;
      throw new Error(`unexpected ${r.method} ${r.path}`);
    });
    const outcome = await applyActions(ctx, [{ op: 'delete', target: { apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p' } }]);
    expect(outcome).toEqual({ result: 'done', refused: 1 });
    expect(request.mock.calls.map(([r]) => `${r.method ?? 'GET'} ${r.path}`)).toEqual(['GET /api/v1/namespaces/a/pods/p']);
  });

  it('goes ahead when the live read finds nothing, and refuses when the ServiceAccount may not read it', async () => {
    const notFound = new KubeApiError(404, 'NotFound', 'pods "p" not found', { method: 'GET', path: '/api/v1/namespaces/a/pods/p' });
    const missing = context((r) => {
      if (r.method === undefined) throw notFound;
      return {};
    });
    expect(await applyActions(missing.ctx, [{ op: 'apply', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } }])).toEqual({ result: 'done', refused: 0 });
    expect(missing.request.mock.calls.map(([r]) => r.method ?? 'GET')).toEqual(['GET', 'PATCH']);

    const forbidden = new KubeApiError(403, 'Forbidden', 'cannot get pods', { method: 'GET', path: '/api/v1/namespaces/a/pods/p' });
    const hidden = context(() => {
      throw forbidden;
    });
    expect(await applyActions(hidden.ctx, [{ op: 'apply', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } } }])).toEqual({ result: 'done', refused: 1 });
    expect(hidden.record.mock.calls[0]?.[1]).toMatchObject({ reason: 'ActionRefused', message: expect.stringContaining('its ServiceAccount may not read it') });
  });
});

describe('applyActions create with a lost answer', () => {
  const create: Action = { op: 'create', object: { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'cm-pod-' }, spec: { containers: [] } } };
  const post = (r: KubeRequest) => r.method === 'POST' && r.path === '/api/v1/namespaces/a/pods';
  const cut = () => Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
  const scripted = (...answers: Array<() => unknown>) => {
    const c = context((r) => {
      if (!post(r)) return {};
      const next = answers.shift();
      if (!next) throw new Error('no more answers');
      return next();
    });
    const names = () => c.request.mock.calls.filter(([r]) => post(r)).map(([r]) => (r.body as KubeObject).metadata?.name);
    return { ...c, names };
  };
  const alreadyExists = () => {
    throw new KubeApiError(409, 'AlreadyExists', 'pods "x" already exists', { method: 'POST', path: '/api/v1/namespaces/a/pods' });
  };
  const forbidden = () => {
    throw new KubeApiError(403, 'Forbidden', 'no', { method: 'POST', path: '/api/v1/namespaces/a/pods' });
  };

  it('sends it again under the same name: AlreadyExists is done, and the owner waits to see the pod', async () => {
    const { ctx, names } = scripted(() => {
      throw cut();
    }, alreadyExists);
    expect(await applyActions(ctx, [create])).toEqual({ result: 'done', refused: 0 });
    const [first, second] = names();
    expect(first).toMatch(/^cm-pod-[a-z0-9]{5}$/);
    expect(second).toBe(first);
    expect(ctx.expectations.satisfied('a/cm', () => undefined)).toBe(false);
    expect(ctx.expectations.satisfied('a/cm', () => ({}))).toBe(true);
  });

  it('still expects the pod when an attempt may have landed and the next one fails for good', async () => {
    const { ctx } = scripted(() => {
      throw cut();
    }, forbidden);
    expect(await applyActions(ctx, [create])).toMatchObject({ result: 'failed', retryable: true });
    expect(ctx.expectations.satisfied('a/cm', () => undefined)).toBe(false);
  });

  it('expects nothing when no attempt can have landed (refused connection, then a refusal)', async () => {
    const { ctx } = scripted(() => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    }, forbidden);
    expect(await applyActions(ctx, [create])).toMatchObject({ result: 'failed' });
    expect(ctx.expectations.satisfied('a/cm', () => undefined)).toBe(true);
  });
});

describe('applyActions: an apply that would change nothing', () => {
  const child = (resourceVersion: string, image = 'app:1'): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'a', uid: 'u-p', resourceVersion, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'u-cm', controller: true }] },
    spec: { containers: [{ name: 'app', image }] },
  });
  const apply = (image: string): Action => ({ op: 'apply', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image }] } } });

  it('is not sent again while the object is the one the last apply produced, and is sent once anything differs', async () => {
    let cached: KubeObject | undefined = child('10');
    let version = 10;
    const { ctx, request } = context(() => (cached = child(String(++version))));
    const patches = () => request.mock.calls.filter(([r]) => r.method === 'PATCH').length;
    const run = { ...ctx, appliedWrites: new AppliedWrites(), lookup: () => cached };
    await applyActions(run, [apply('app:1')]);
    expect(patches()).toBe(1);
    // The same answer again, the watch showing what the apply produced: nothing to send.
    expect(await applyActions(run, [apply('app:1')])).toEqual({ result: 'done', refused: 0 });
    expect(patches()).toBe(1);
    expect(await run.metrics.registry.getSingleMetricAsString('kubeloop_router_actions_total')).toContain('result="unchanged",component="router"} 1');
    // A different configuration is sent.
    await applyActions(run, [apply('app:2')]);
    expect(patches()).toBe(2);
    // Someone else wrote the object since (a newer resourceVersion): the same configuration is sent to take it back.
    cached = child(String(++version), 'app:edited');
    await applyActions(run, [apply('app:2')]);
    expect(patches()).toBe(3);
    // The object gone from the cache: sent.
    cached = undefined;
    await applyActions(run, [apply('app:2')]);
    expect(patches()).toBe(4);
  });

  it('sends every apply with a memory of capacity 0 (the behaviour before)', async () => {
    let cached: KubeObject | undefined = child('5');
    const { ctx, request } = context(() => (cached = child('5')));
    const run = { ...ctx, appliedWrites: new AppliedWrites(0), lookup: () => cached };
    for (let i = 0; i < 3; i++) await applyActions(run, [apply('app:1')]);
    expect(request).toHaveBeenCalledTimes(3);
  });
});

describe('applyActions patch', () => {
  it("asks for the patch's reply as the object's metadata (PartialObjectMetadata, protobuf first) and keeps the resourceVersion it produced", async () => {
    const { ctx, request } = context((r) => (r.method === 'PATCH' ? { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'cm', namespace: 'a', resourceVersion: '2' } } : {}));
    const outcome = await applyActions(ctx, [{ op: 'patch', target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'cm' }, patch: [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }] }]);
    expect(outcome).toEqual({ result: 'done', refused: 0, primaryResourceVersion: '2' });
    const patch = request.mock.calls.map(([r]) => r).find((r) => r.method === 'PATCH');
    expect(patch?.accept).toBe('application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json');
  });

  describe("a metadata-only Loop's primary", () => {
    const metadataOnly = parseLoop({ metadata: { name: 'cm' }, spec: { for: { apiVersion: 'v1', kind: 'ConfigMap' }, metadataOnly: true, serviceAccount: { namespace: 'a', name: 'loop' }, function: { url: 'http://fn.a.svc/' } } });
    const sent: KubeObject = { ...primary, metadata: { ...primary.metadata, labels: { app: 'web' } } };
    // The function's own test of the version it was sent, as the SDK's patchAction writes it.
    const label: Action = { op: 'patch', target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a', name: 'cm' }, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '1' }, { op: 'add', path: '/metadata/labels/a', value: 'b' }] };
    /** The server refuses the PATCH (a failed test: 422) when `refuse`; `cached` and `live` are the object meanwhile. */
    const patched = (cached: KubeObject, options: { refuse?: boolean; live?: KubeObject } = {}) => {
      const { ctx, request } = context((r) => {
        if (r.method !== 'PATCH') return options.live ?? cached;
        if (options.refuse) throw new KubeApiError(422, 'Invalid', 'the server rejected our request', { method: 'PATCH', path: r.path });
        return { metadata: { name: 'cm', namespace: 'a', resourceVersion: '3' } };
      });
      const patches = () => request.mock.calls.map(([r]) => r).filter((r) => r.method === 'PATCH').map((r) => JSON.parse(r.body as string) as unknown);
      return { ctx: { ...ctx, loop: metadataOnly, primary: sent, lookup: () => cached }, patches };
    };
    const statusWritten = { ...sent, metadata: { ...sent.metadata, resourceVersion: '2', managedFields: [{ manager: 'kwok' }] } };

    it('is tested against the metadata its function saw, not the resourceVersion: a status write meanwhile does not refuse it', async () => {
      const { ctx, patches } = patched(statusWritten);
      expect(await applyActions(ctx, [label])).toEqual({ result: 'done', refused: 0, primaryResourceVersion: '3' });
      expect(patches()).toEqual([[...seenMetadataTests(sent), { op: 'add', path: '/metadata/labels/a', value: 'b' }]]);
    });

    it('counts a refusal as a stale write when the object changed in what its function saw, else as an invalid patch', async () => {
      const relabelled = patched({ ...sent, metadata: { ...sent.metadata, resourceVersion: '2', labels: { app: 'web', other: 'x' } } }, { refuse: true });
      expect(await applyActions(relabelled.ctx, [label])).toMatchObject({ result: 'conflict', message: expect.stringContaining('changed since it was read (labels; resourceVersion now 2)') });
      // The cache still at the version the function saw: the live object tells.
      const lagging = patched(sent, { refuse: true, live: { ...sent, metadata: { ...sent.metadata, resourceVersion: '2', finalizers: ['x'] } } });
      expect(await applyActions(lagging.ctx, [label])).toMatchObject({ result: 'conflict' });
      const invalid = patched(statusWritten, { refuse: true });
      expect(await applyActions(invalid.ctx, [label])).toMatchObject({ result: 'failed', retryable: false });
    });

    it('keeps a pinned resourceVersion, and tests the resourceVersion for a Loop that reads whole objects', async () => {
      const pinned: Action = { ...label, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '0' }, { op: 'add', path: '/metadata/labels/a', value: 'b' }] } as Action;
      const metadata = patched(statusWritten);
      await applyActions(metadata.ctx, [pinned]);
      expect(metadata.patches()).toEqual([pinned.op === 'patch' && pinned.patch]);
      const whole = patched(statusWritten);
      await applyActions({ ...whole.ctx, loop }, [label]);
      expect(whole.patches()).toEqual([label.op === 'patch' && label.patch]);
    });
  });
});
