import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LoopSpec } from '../../api/loop.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { harness, loopObject, stopControllers, WAIT } from '../../test/support/loop-controller-harness.ts';

afterEach(stopControllers);

const team = loopObject({ serviceAccount: { name: 'loop' } as LoopSpec['serviceAccount'] });
const teamLoop = (namespace: string, name: string) =>
  ({ ...team, kind: 'Loop', metadata: { ...team.metadata, name, namespace, uid: `uid-${namespace}-${name}` } }) as unknown as KubeObject;

describe('LoopController periodic access reviews', () => {
  it('reviews one Loop of each namespace in turn, so a tenant with many Loops does not hold back another\'s review', async () => {
    // No sweep of its own during the test (reviewAll is the sweep), no start limit in the way.
    const h = harness({ accessReviewIntervalMs: 3_600_000, tenantLoopStarts: { qps: 0, burst: 0 } });
    await h.start();
    for (let i = 0; i < 30; i += 1) h.teamLoopInformer.put(teamLoop('team-a', `l${i}`));
    h.teamLoopInformer.put(teamLoop('team-b', 'x'));
    await h.controller.waitForLoop('team-b/x', 10_000);
    for (let i = 0; i < 30; i += 1) await h.controller.waitForLoop(`team-a/l${i}`, 10_000);
    const before = h.reviewed.length;
    h.controller.reviewAll();
    await vi.waitFor(() => expect(h.reviewed.length).toBe(before + 31), WAIT);
    // team-b's Loop is reviewed second, not after team-a's 30.
    expect(h.reviewed.slice(before).indexOf('team-b/x')).toBeLessThan(2);
  });

  it('starts a Loop created during a sweep before the sweep\'s reviews', async () => {
    const h = harness({ accessReviewIntervalMs: 3_600_000, tenantLoopStarts: { qps: 0, burst: 0 } });
    await h.start();
    for (let i = 0; i < 30; i += 1) h.teamLoopInformer.put(teamLoop('team-a', `l${i}`));
    for (let i = 0; i < 30; i += 1) await h.controller.waitForLoop(`team-a/l${i}`, 10_000);
    const before = h.reviewed.length;
    h.controller.reviewAll();
    h.teamLoopInformer.put(teamLoop('team-c', 'new'));
    await h.controller.waitForLoop('team-c/new', 10_000);
    await vi.waitFor(() => expect(h.reviewed.length).toBe(before + 31), WAIT);
    // Taken off the queue ahead of the sweep: only reviews its 4 workers run while the new Loop starts go first,
    // not the whole sweep (its review is the last of its start's steps).
    expect(h.reviewed.slice(before).indexOf('team-c/new')).toBeLessThan(30);
  });
});

describe('LoopController reviews after an RBAC change', () => {
  it('reviews the running Loops whose namespaces the change concerns, and stops one that lost its rights', async () => {
    const h = harness({ accessReviewIntervalMs: 3_600_000, tenantLoopStarts: { qps: 0, burst: 0 } });
    await h.start();
    h.teamLoopInformer.put(teamLoop('team-a', 'x'));
    h.teamLoopInformer.put(teamLoop('team-b', 'y'));
    await h.controller.waitForLoop('team-a/x', 10_000);
    await h.controller.waitForLoop('team-b/y', 10_000);
    const before = h.reviewed.length;
    h.access.denied = 'may not list pods';
    h.controller.reviewChanged({ cluster: false, namespaces: new Set(['team-a']) });
    await vi.waitFor(() => expect(h.controller.health('team-a/x')?.reason).toBe('Forbidden'), WAIT);
    // team-b's Loop was not asked about: the change was in team-a.
    expect(h.reviewed.slice(before)).toEqual(['team-a/x']);
    expect(h.controller.runner('team-b/y')).toBeDefined();
  });

  it('starts a Loop denied its rights once an RBAC change grants them, without waiting for its backoff', async () => {
    const h = harness({ accessReviewIntervalMs: 3_600_000, tenantLoopStarts: { qps: 0, burst: 0 } });
    h.access.denied = 'may not list pods';
    await h.start();
    h.teamLoopInformer.put(teamLoop('team-a', 'x'));
    // Denied five times over: its next backoff review is at least 6.4 s away.
    await vi.waitFor(() => expect(h.reviewed.filter((n) => n === 'team-a/x').length).toBeGreaterThanOrEqual(5), { timeout: 30_000, interval: 20 });
    delete h.access.denied;
    h.controller.reviewChanged({ cluster: true, namespaces: new Set() });
    await h.controller.waitForLoop('team-a/x', 5_000);
  });
});

describe('LoopController when a kind\'s watch moves (--cluster-wide-watch lost or regained)', () => {
  it('restarts the namespaced Loops on the kind, without spending their tenant\'s starts, and leaves the others running', async () => {
    // No start left after the first: a restart charged to the tenant would wait 100 s.
    const h = harness({ tenantLoopStarts: { qps: 0.01, burst: 1 } });
    await h.start();
    h.teamLoopInformer.put(teamLoop('team-a', 'x'));
    const first = await h.controller.waitForLoop('team-a/x', 10_000);
    h.loopInformer.put(loopObject());
    const cluster = await h.controller.waitForLoop('podset', 10_000);
    h.informers.changeScope('v1', 'Pod', 'per-namespace');
    await vi.waitFor(() => expect([undefined, first]).not.toContain(h.controller.runner('team-a/x')), WAIT);
    expect(h.controller.health('team-a/x')?.reason).not.toBe('StartThrottled');
    // A ClusterLoop's watches are never per namespace: it runs on.
    expect(h.controller.runner('podset')).toBe(cluster);
    expect(h.counts.stops).toBe(1);
  });
});
