import { afterEach, describe, expect, it, vi } from 'vitest';
import { RELEASE_PRIMARIES_FINALIZER, type LoopSpec } from '../../api/loop.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { harness, loopObject, stopControllers, WAIT } from '../../test/support/loop-controller-harness.ts';

afterEach(stopControllers);

describe('LoopController', () => {
  it('starts a Loop when it appears, and writes Ready=True once its caches are complete', async () => {
    const h = harness();
    await h.start();
    h.loopInformer.put(loopObject());
    const runner = await h.controller.waitForLoop('podset', 10_000);
    expect(runner.loop.serviceAccount).toEqual({ namespace: 'a', name: 'loop' });
    await vi.waitFor(() => expect(h.lastReady()).toMatchObject({ status: 'True', reason: 'Running' }), WAIT);
    expect(h.counts.reviews).toBe(1);
  });

  it('restarts a Loop whose spec changed, and stops one that is deleted, forgetting its health', async () => {
    const h = harness();
    await h.start();
    h.loopInformer.put(loopObject());
    const first = await h.controller.waitForLoop('podset', 10_000);
    h.loopInformer.put(loopObject({ sendDeletes: true }, { generation: 2 }));
    await vi.waitFor(() => expect(h.controller.runner('podset')?.loop.sendDeletes).toBe(true), WAIT);
    expect(h.controller.runner('podset')).not.toBe(first);
    expect(h.counts.stops).toBe(1);
    h.loopInformer.remove(loopObject());
    await vi.waitFor(() => expect(h.controller.health('podset')).toBeUndefined(), WAIT);
    expect(h.controller.runner('podset')).toBeUndefined();
    // Only the controller's own watches of ClusterLoops and Loops are still held.
    expect(h.informers.held).toBe(2);
  });

  it('treats a Loop that no longer matches its selector as deleted', async () => {
    const h = harness({ loopSelector: { matchLabels: { router: 'one' } } });
    await h.start();
    h.loopInformer.put(loopObject({}, { labels: { router: 'one' } }));
    await h.controller.waitForLoop('podset', 10_000);
    h.loopInformer.put({ ...loopObject({}, { labels: { router: 'two' } }), metadata: { ...loopObject().metadata, resourceVersion: '2', labels: { router: 'two' } } });
    await vi.waitFor(() => expect(h.controller.runner('podset')).toBeUndefined(), WAIT);
  });

  it('keeps a Loop its ServiceAccount may not read from running (Forbidden, a Warning event), and starts it once allowed', async () => {
    const h = harness();
    h.access.denied = 'ServiceAccount a/loop may not list pods';
    await h.start();
    h.loopInformer.put(loopObject());
    await vi.waitFor(() => expect(h.lastReady()).toMatchObject({ status: 'False', reason: 'Forbidden' }), WAIT);
    expect(h.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'Forbidden', message: h.access.denied }));
    expect(h.controller.runner('podset')).toBeUndefined();
    // RBAC created just after the Loop: the backoff reviews it again without any change to the Loop.
    delete h.access.denied;
    await h.controller.waitForLoop('podset', 10_000);
    await vi.waitFor(() => expect(h.lastReady()).toMatchObject({ status: 'True' }), WAIT);
  });

  it('stops a running Loop when a periodic review denies it, and leaves an allowed one running', async () => {
    const h = harness({ accessReviewIntervalMs: 50 });
    await h.start();
    h.loopInformer.put(loopObject());
    const runner = await h.controller.waitForLoop('podset', 10_000);
    await vi.waitFor(() => expect(h.counts.reviews).toBeGreaterThan(2), WAIT);
    expect(h.controller.runner('podset')).toBe(runner);
    h.access.denied = 'access revoked';
    await vi.waitFor(() => expect(h.controller.runner('podset')).toBeUndefined(), WAIT);
    expect(h.controller.health('podset')).toMatchObject({ ready: false, reason: 'Forbidden', message: 'access revoked' });
    expect(h.counts.stops).toBe(1);
  });

  it('reports an invalid spec with a Warning event and starts nothing until the Loop is edited', async () => {
    const h = harness();
    await h.start();
    h.loopInformer.put(loopObject({ function: { url: 'ftp://nowhere/' } }));
    await vi.waitFor(() => expect(h.lastReady()).toMatchObject({ status: 'False', reason: 'InvalidSpec' }), WAIT);
    expect(h.events).toContainEqual(expect.objectContaining({ reason: 'InvalidSpec' }));
    expect(h.counts).toMatchObject({ launches: 0, reviews: 0 });
    h.loopInformer.put(loopObject({}, { generation: 2 }));
    await h.controller.waitForLoop('podset', 10_000);
  });

  it('waits, InvalidSigningSecret, while the signing Secret is unusable, and starts once it is', async () => {
    const h = harness();
    h.signing.problem = 'signing Secret a/key has no key "k"';
    await h.start();
    h.loopInformer.put(loopObject());
    await vi.waitFor(() => expect(h.lastReady()).toMatchObject({ status: 'False', reason: 'InvalidSigningSecret' }), WAIT);
    delete h.signing.problem;
    await h.controller.waitForLoop('podset', 10_000);
  });

  it('restarts a Loop whose signing Secret broke while it ran, which then waits for a valid key', async () => {
    const h = harness();
    await h.start();
    h.loopInformer.put(loopObject());
    const first = await h.controller.waitForLoop('podset', 10_000);
    h.signing.problem = 'deleted';
    h.signing.hooks!.signingBroken('signing Secret deleted');
    await vi.waitFor(() => expect(h.controller.health('podset')).toMatchObject({ reason: 'InvalidSigningSecret' }), WAIT);
    expect(h.controller.runner('podset')).toBeUndefined();
    delete h.signing.problem;
    await vi.waitFor(() => expect([undefined, first]).not.toContain(h.controller.runner('podset')), WAIT);
  });

  it('reports a kind the API server does not serve as InvalidSpec, and starts once it is served', async () => {
    const h = harness();
    await h.start();
    const widgets = { group: 'example.com', version: 'v1', apiVersion: 'example.com/v1', kind: 'Widget', plural: 'widgets', namespaced: true };
    h.loopInformer.put(loopObject({ for: { apiVersion: widgets.apiVersion, kind: widgets.kind } }));
    await vi.waitFor(() => expect(h.lastReady()).toMatchObject({ status: 'False', reason: 'InvalidSpec' }), WAIT);
    // The CRD is installed later: the backoff looks again.
    h.informers.serve(widgets);
    h.informers.of(widgets.apiVersion, widgets.kind).sync();
    await h.controller.waitForLoop('podset', 10_000);
  });

  it('runs a namespaced Loop beside a ClusterLoop of the same name, keyed by identity, its status written in its namespace', async () => {
    const h = harness();
    await h.start();
    h.loopInformer.put(loopObject());
    const team = loopObject({ serviceAccount: { name: 'loop' } as LoopSpec['serviceAccount'] });
    h.teamLoopInformer.put({ ...team, kind: 'Loop', metadata: { ...team.metadata, namespace: 'team-a', uid: 'uid-team' } });
    const runner = await h.controller.waitForLoop('team-a/podset', 10_000);
    expect(runner.loop).toMatchObject({ id: 'team-a/podset', name: 'podset', namespace: 'team-a', namespaces: new Set(['team-a']), serviceAccount: { namespace: 'team-a', name: 'loop' } });
    expect(h.controller.runner('podset')?.loop.id).toBe('podset');
    await vi.waitFor(() => expect(h.statusPaths).toContain('/apis/kubeloop.dev/v1alpha1/namespaces/team-a/loops/podset/status'), WAIT);
    expect(h.statusPaths).toContain('/apis/kubeloop.dev/v1alpha1/clusterloops/podset/status');
  });

  it('refuses a namespaced Loop owning a cluster-scoped kind as InvalidSpec naming it, and starts nothing', async () => {
    const h = harness();
    await h.start();
    const team = loopObject({ serviceAccount: { name: 'loop' } as LoopSpec['serviceAccount'], owns: [{ apiVersion: 'v1', kind: 'Node' }] });
    h.teamLoopInformer.put({ ...team, kind: 'Loop', metadata: { ...team.metadata, namespace: 'team-a' } });
    await vi.waitFor(() => expect(h.lastReady()).toMatchObject({ status: 'False', reason: 'InvalidSpec' }), WAIT);
    expect(h.events).toContainEqual(expect.objectContaining({ reason: 'InvalidSpec', message: expect.stringContaining('spec.owns[0] Node (v1) is cluster-scoped') }));
    expect(h.counts).toMatchObject({ launches: 0, reviews: 0 });
  });

  it('runs the oldest Loops of a namespace up to its limit, holds the rest TenantLimitExceeded, and starts the next when one goes', async () => {
    const h = harness({ maxLoopsPerTenant: 2 });
    await h.start();
    const team = loopObject({ serviceAccount: { name: 'loop' } as LoopSpec['serviceAccount'] });
    const teamLoop = (name: string, second: number, namespace = 'team-a') =>
      ({ ...team, kind: 'Loop', metadata: { ...team.metadata, name, namespace, uid: `uid-${namespace}-${name}`, creationTimestamp: `2026-11-28T10:00:0${second}Z` } }) as unknown as KubeObject;
    for (const [name, second] of [['c', 3], ['a', 1], ['b', 2]] as const) h.teamLoopInformer.put(teamLoop(name, second));
    h.teamLoopInformer.put(teamLoop('z', 9, 'team-b'));
    await h.controller.waitForLoop('team-a/a', 10_000);
    await h.controller.waitForLoop('team-a/b', 10_000);
    await h.controller.waitForLoop('team-b/z', 10_000);
    await vi.waitFor(() => expect(h.controller.health('team-a/c')).toMatchObject({ ready: false, reason: 'TenantLimitExceeded' }), WAIT);
    expect(h.controller.health('team-a/c')?.message).toContain('namespace team-a has 3 Loops and the router runs at most 2 per namespace');
    expect(h.controller.runner('team-a/c')).toBeUndefined();
    expect(h.events).toContainEqual(expect.objectContaining({ reason: 'TenantLimitExceeded' }));
    // A ClusterLoop is not counted in any namespace.
    h.loopInformer.put(loopObject());
    await h.controller.waitForLoop('podset', 10_000);
    h.teamLoopInformer.remove(teamLoop('a', 1));
    await h.controller.waitForLoop('team-a/c', 10_000);
    expect(h.controller.runner('team-a/b')).toBeDefined();
  });

  it('holds back a namespace churning Loops (StartThrottled) without delaying another namespace\'s Loop, and starts all of them in the end', async () => {
    const h = harness({ tenantLoopStarts: { qps: 2, burst: 2 } });
    await h.start();
    const team = loopObject({ serviceAccount: { name: 'loop' } as LoopSpec['serviceAccount'] });
    const teamLoop = (namespace: string, name: string, generation: number) =>
      ({ ...team, kind: 'Loop', metadata: { ...team.metadata, name, namespace, uid: `uid-${namespace}-${name}`, generation, resourceVersion: String(generation) }, spec: { ...(team.spec as LoopSpec), function: { ...(team.spec as LoopSpec).function, maxConcurrency: generation } } }) as unknown as KubeObject;
    // team-a churns: 100 changes to 5 Loops, each change a restart the router pays for.
    for (let i = 0; i < 100; i += 1) h.teamLoopInformer.put(teamLoop('team-a', `l${i % 5}`, Math.floor(i / 5) + 1));
    await vi.waitFor(() => expect(['l0', 'l1', 'l2', 'l3', 'l4'].map((n) => h.controller.health(`team-a/${n}`)?.reason)).toContain('StartThrottled'), WAIT);
    h.teamLoopInformer.put(teamLoop('team-b', 'x', 1));
    await h.controller.waitForLoop('team-b/x', 10_000);
    // team-b's Loop started on its own namespace's tokens while team-a's still wait their turn.
    expect(['l0', 'l1', 'l2', 'l3', 'l4'].map((n) => h.controller.health(`team-a/${n}`)?.reason)).toContain('StartThrottled');
    expect(h.statuses).toContainEqual({ status: expect.objectContaining({ conditions: [expect.objectContaining({ reason: 'StartThrottled', message: expect.stringContaining('namespace team-a (re)started more Loops') })] }) });
    // Held back, never dropped: each of team-a's Loops runs its last spec in the end.
    for (const n of ['l0', 'l1', 'l2', 'l3', 'l4']) await vi.waitFor(() => expect(h.controller.runner(`team-a/${n}`)?.loop.maxConcurrency).toBe(20), { timeout: 30_000, interval: 50 });
    const throttled = await h.metrics.registry.getSingleMetricAsString('kubeloop_router_loop_starts_throttled_total');
    expect(throttled).toMatch(/kubeloop_router_loop_starts_throttled_total [1-9]/);
  }, 60_000);

  it('holds a finalizing Loop with its own finalizer, and on deletion stops it, releases its primaries and lets it go', async () => {
    const h = harness();
    await h.start();
    const team = loopObject({ serviceAccount: { name: 'loop' } as LoopSpec['serviceAccount'], finalize: true });
    const live = { ...team, kind: 'Loop', metadata: { ...team.metadata, namespace: 'team-a' } } as unknown as KubeObject;
    h.teamLoopInformer.put(live);
    await h.controller.waitForLoop('team-a/podset', 10_000);
    const loopPath = '/apis/kubeloop.dev/v1alpha1/namespaces/team-a/loops/podset';
    await vi.waitFor(() => expect(h.statusPaths).toContain(loopPath), WAIT);
    expect(h.statuses[h.statusPaths.indexOf(loopPath)]).toEqual([{ op: 'add', path: '/metadata/finalizers', value: [RELEASE_PRIMARIES_FINALIZER] }]);
    expect(h.counts.releases).toBe(0);
    const deleting = { ...live, metadata: { ...live.metadata, generation: 2, resourceVersion: '5', deletionTimestamp: new Date().toISOString(), finalizers: [RELEASE_PRIMARIES_FINALIZER] } } as unknown as KubeObject;
    h.teamLoopInformer.put(deleting);
    await vi.waitFor(() => expect(h.counts.releases).toBe(1), WAIT);
    await vi.waitFor(() => expect(h.statuses.at(-1)).toEqual([{ op: 'test', path: '/metadata/finalizers/0', value: RELEASE_PRIMARIES_FINALIZER }, { op: 'remove', path: '/metadata/finalizers/0' }]), WAIT);
    expect(h.controller.runner('team-a/podset')).toBeUndefined();
  });

  it('stops every runner on stop', async () => {
    const h = harness();
    await h.start();
    h.loopInformer.put(loopObject());
    await h.controller.waitForLoop('podset', 10_000);
    await h.controller.stop();
    expect(h.informers.held).toBe(0);
  });
});
