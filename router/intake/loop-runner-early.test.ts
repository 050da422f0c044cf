import { afterEach, describe, expect, it, vi } from 'vitest';
import { harness, pod, podSet, PODSETS, settle, stopRunners } from '../../test/support/loop-runner-harness.ts';

afterEach(stopRunners);

const names = (h: ReturnType<typeof harness>) => h.calls.map((c) => `${c.request.object.metadata?.name}@${c.request.object.metadata?.resourceVersion} ${c.request.trigger.type}`);

describe('LoopRunner: first calls before the primary list is complete', () => {
  it('calls a primary as its list brings it once every other cache is complete, and not again at the sync', async () => {
    const h = harness();
    await h.runner.start();
    h.podsets.gather(podSet('one'));
    await settle();
    // The pods are not listed yet: a PodSet must never be called with half its pods.
    expect(h.calls).toHaveLength(0);
    h.pods.sync();
    await vi.waitFor(() => expect(names(h)).toEqual(['one@1 ADDED']));
    h.podsets.gather(podSet('two'));
    await vi.waitFor(() => expect(names(h)).toEqual(['one@1 ADDED', 'two@1 ADDED']));
    expect(h.runner.stats().synced).toBe(false);
    // The list completes: what it brought was called already, in this very state.
    for (const name of ['one', 'two']) h.podsets.put(podSet(name));
    h.podsets.sync();
    await h.runner.synced;
    await h.calledAndIdle(2);
  });

  it('at the sync, calls the primaries not called yet and, with its newer state, one the list brought again changed', async () => {
    const h = harness();
    await h.runner.start();
    h.pods.sync();
    h.podsets.gather(podSet('one'));
    h.podsets.gather(podSet('two'));
    h.podsets.gather(podSet('gone'));
    await h.calledAndIdle(3);
    // A restarted list: two changed, gone was deleted, three is new.
    h.podsets.put(podSet('one'));
    h.podsets.put(podSet('two', { resourceVersion: '2' }));
    h.podsets.put(podSet('three'));
    h.podsets.sync();
    await h.runner.synced;
    await h.calledAndIdle(5);
    expect(names(h).slice(3).sort()).toEqual(['three@1 ADDED', 'two@2 ADDED']);
  });

  it('calls a primary called early again when one of its children changes before the sync', async () => {
    const h = harness();
    await h.runner.start();
    h.pods.sync();
    const one = podSet('one');
    h.podsets.gather(one);
    await h.calledAndIdle(1);
    h.pods.put(pod('one-a', one));
    await h.calledAndIdle(2);
    expect(h.calls[1]?.request).toMatchObject({ trigger: { type: 'CHILD', child: { name: 'one-a' } }, children: { 'Pod.v1': [{ metadata: { name: 'one-a' } }] } });
  });

  it('calls nothing before the sync when it owns its own kind: a request would hold half the primaries', async () => {
    const h = harness({ owns: [{ apiVersion: PODSETS.apiVersion, kind: PODSETS.kind }] });
    await h.runner.start();
    h.podsets.gather(podSet('one'));
    await settle();
    await settle();
    expect(h.calls).toHaveLength(0);
    h.podsets.put(podSet('one'));
    h.podsets.sync();
    await h.runner.synced;
    await h.calledAndIdle(1);
  });
});
