import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LoopSpec } from '../../api/loop.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { harness, loopObject, stopControllers, WAIT } from '../../test/support/loop-controller-harness.ts';

afterEach(stopControllers);

const team = loopObject({ serviceAccount: { name: 'loop' } as LoopSpec['serviceAccount'] });
/** A Loop of team-a whose spec (maxConcurrency) is its generation: every generation is a spec change. */
const teamLoop = (name: string, generation: number) =>
  ({
    ...team,
    kind: 'Loop',
    metadata: { ...team.metadata, name, namespace: 'team-a', uid: `uid-${name}`, generation, resourceVersion: String(generation) },
    spec: { ...(team.spec as LoopSpec), function: { ...(team.spec as LoopSpec).function, maxConcurrency: generation } },
  }) as unknown as KubeObject;
const statusPath = (name: string) => `/apis/kubeloop.dev/v1alpha1/namespaces/team-a/loops/${name}/status`;
type Status = { status: { observedGeneration: number; conditions: Array<{ type: string; status: string; reason: string; observedGeneration?: number; message: string }> } };

describe('LoopController with a namespace out of Loop starts', () => {
  it('keeps the running generation of an edited Loop until the new one may start, then hands over (StartThrottled condition meanwhile)', async () => {
    // One start at once, the next after 4 s: the edit waits while the first generation runs.
    const h = harness({ tenantLoopStarts: { qps: 0.25, burst: 1 } });
    await h.start();
    h.teamLoopInformer.put(teamLoop('x', 1));
    const first = await h.controller.waitForLoop('team-a/x', 10_000);
    await vi.waitFor(() => expect(h.controller.conditions('team-a/x')).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True', observedGeneration: 1 })), WAIT);
    h.teamLoopInformer.put(teamLoop('x', 2));
    await vi.waitFor(() => expect(h.controller.conditions('team-a/x')).toContainEqual(expect.objectContaining({ type: 'StartThrottled', status: 'True' })), WAIT);
    // The first generation still works, and its status says so: Ready=True for generation 1, the new spec waiting.
    expect(h.controller.runner('team-a/x')).toBe(first);
    expect(h.counts.stops).toBe(0);
    const written = h.statuses[h.statusPaths.lastIndexOf(statusPath('x'))] as Status;
    expect(written.status.observedGeneration).toBe(1);
    expect(written.status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True', reason: 'Running', observedGeneration: 1 }));
    expect(written.status.conditions).toContainEqual(expect.objectContaining({ type: 'StartThrottled', status: 'True', message: expect.stringContaining('generation 1 keeps running until then') }));
    // Its turn comes: the new generation replaces the old, and the condition goes.
    await vi.waitFor(() => expect(h.controller.runner('team-a/x')?.loop.maxConcurrency).toBe(2), { timeout: 30_000, interval: 50 });
    expect(h.counts.stops).toBe(1);
    await vi.waitFor(() => expect((h.statuses[h.statusPaths.lastIndexOf(statusPath('x'))] as Status).status).toMatchObject({ observedGeneration: 2, conditions: [expect.objectContaining({ type: 'Ready', status: 'True', observedGeneration: 2 })] }), WAIT);
    expect(h.controller.conditions('team-a/x').map((c) => c.type)).not.toContain('StartThrottled');
  }, 60_000);

  it('stops a deleted Loop at once, whatever its namespace\'s start turn', async () => {
    // The next start in 100 s: the deletion must not wait for it.
    const h = harness({ tenantLoopStarts: { qps: 0.01, burst: 1 } });
    await h.start();
    h.teamLoopInformer.put(teamLoop('x', 1));
    await h.controller.waitForLoop('team-a/x', 10_000);
    h.teamLoopInformer.put(teamLoop('x', 2));
    await vi.waitFor(() => expect(h.controller.conditions('team-a/x').map((c) => c.type)).toContain('StartThrottled'), WAIT);
    h.teamLoopInformer.remove(teamLoop('x', 2));
    await vi.waitFor(() => expect(h.controller.runner('team-a/x')).toBeUndefined(), WAIT);
    await vi.waitFor(() => expect(h.controller.health('team-a/x')).toBeUndefined(), WAIT);
    expect(h.counts.stops).toBe(1);
  });

  it('writes a held-back Loop\'s status once, not once per edit, whether it runs meanwhile or not', async () => {
    const h = harness({ tenantLoopStarts: { qps: 0.01, burst: 1 } });
    await h.start();
    h.teamLoopInformer.put(teamLoop('running', 1));
    await h.controller.waitForLoop('team-a/running', 10_000);
    await vi.waitFor(() => expect(h.statusPaths).toContain(statusPath('running')), WAIT);
    const throttled = async () => (await h.metrics.loopStartsThrottled.get()).values[0]?.value ?? 0;
    const writes = (name: string) => h.statusPaths.filter((p) => p === statusPath(name)).length;
    const before = writes('running');
    // A tenant editing both Loops in a tight loop: each edit is reconciled (and held back), one after another.
    for (let generation = 1; generation <= 20; generation += 1) {
      const seen = await throttled();
      h.teamLoopInformer.put(teamLoop('waiting', generation));
      if (generation > 1) h.teamLoopInformer.put(teamLoop('running', generation));
      await vi.waitFor(async () => expect(await throttled()).toBe(seen + (generation > 1 ? 2 : 1)), WAIT);
    }
    expect(h.controller.health('team-a/waiting')).toMatchObject({ ready: false, reason: 'StartThrottled' });
    expect(writes('waiting')).toBe(1);
    expect(writes('running') - before).toBe(1);
  });
});

describe('LoopController and the Throttled sampler', () => {
  const throttledAtStart = (h: ReturnType<typeof harness>) => [...h.controller.throttleSources()].map((source) => [source.name, source.throttledAtStart]);

  it("hands a Loop's sampler what its condition says, from its status after a router restart and from the runner before on a restart", async () => {
    const h = harness();
    await h.start();
    const throttled = { ...teamLoop('x', 1), status: { conditions: [{ type: 'Throttled', status: 'True', reason: 'ApiBudget', message: 'from the router before' }] } } as unknown as KubeObject;
    h.teamLoopInformer.put(throttled);
    h.teamLoopInformer.put(teamLoop('y', 1));
    await h.controller.waitForLoop('team-a/x', 10_000);
    await h.controller.waitForLoop('team-a/y', 10_000);
    // A stale True is cleared by the sampler once the new runner is seen not to wait; absent, nothing is written.
    expect(throttledAtStart(h).sort()).toEqual([
      ['team-a/x', 'ApiBudget'],
      ['team-a/y', undefined],
    ]);
    // The sampler set y Throttled; y restarts for a new spec: its new runner goes on from that.
    h.controller.setThrottled('team-a/y', { type: 'Throttled', status: 'True', reason: 'CallShare', message: 'waited' });
    const first = h.controller.runner('team-a/y');
    h.teamLoopInformer.put(teamLoop('y', 2));
    await vi.waitFor(() => expect(h.controller.runner('team-a/y')?.loop.maxConcurrency).toBe(2), WAIT);
    expect(h.controller.runner('team-a/y')).not.toBe(first);
    expect(throttledAtStart(h).sort()).toEqual([
      ['team-a/x', 'ApiBudget'],
      ['team-a/y', 'CallShare'],
    ]);
  });
});

