import { describe, expect, it } from 'vitest';
import { RELEASE_PRIMARIES_FINALIZER, type Loop } from '../../api/loop.ts';
import { addLoopFinalizerPatch, loopFinalizerStep, RELEASE_GIVE_UP_MS, releaseGivenUp } from './primary-release.ts';

const loop = (metadata: Partial<Omit<Loop['metadata'], 'deletionTimestamp'>> & { deletionTimestamp?: string } = {}): Loop => ({ apiVersion: 'kubeloop.dev/v1alpha1', kind: 'Loop', metadata: { name: 'x', namespace: 'team-a', ...metadata } as Loop['metadata'], spec: {} as Loop['spec'] });
const held = { finalizers: [RELEASE_PRIMARIES_FINALIZER] };

describe("the router's finalizer on a Loop", () => {
  it('is added to a live finalizing Loop, and releases the primaries when the Loop goes or stops finalizing', () => {
    expect(loopFinalizerStep(loop(), true)).toBe('add');
    expect(loopFinalizerStep(loop(held), true)).toBe('none');
    expect(loopFinalizerStep(loop({ ...held, deletionTimestamp: '2026-11-28T10:00:00Z' }), true)).toBe('release');
    expect(loopFinalizerStep(loop(held), false)).toBe('release');
    // Never added to a Loop already being deleted, nor to one that does not finalize.
    expect(loopFinalizerStep(loop({ deletionTimestamp: '2026-11-28T10:00:00Z' }), true)).toBe('none');
    expect(loopFinalizerStep(loop(), false)).toBe('none');
  });

  it('gives a failing release up only some minutes after the deletion', () => {
    const deleted = Date.parse('2026-11-28T10:00:00Z');
    const deleting = loop({ ...held, deletionTimestamp: '2026-11-28T10:00:00Z' });
    expect(releaseGivenUp(deleting, deleted + 1000)).toBe(false);
    expect(releaseGivenUp(deleting, deleted + RELEASE_GIVE_UP_MS + 1)).toBe(true);
    expect(releaseGivenUp(loop(held), deleted + RELEASE_GIVE_UP_MS * 10)).toBe(false);
  });

  it('is added guarded by the finalizers seen, not by the resourceVersion status writes change', () => {
    expect(addLoopFinalizerPatch(loop())).toEqual([{ op: 'add', path: '/metadata/finalizers', value: [RELEASE_PRIMARIES_FINALIZER] }]);
    expect(addLoopFinalizerPatch(loop({ finalizers: ['other'] }))).toEqual([
      { op: 'test', path: '/metadata/finalizers', value: ['other'] },
      { op: 'add', path: '/metadata/finalizers/-', value: RELEASE_PRIMARIES_FINALIZER },
    ]);
  });
});
