import { describe, expect, it } from 'vitest';
import { loopAttributes, notShown } from './loop-disclosure.ts';

describe('what the history API tells about a Loop', () => {
  it('asks whether the caller may get the Loop itself: a namespaced Loop or a ClusterLoop by identity', () => {
    expect(loopAttributes('team-a/copier')).toEqual({ verb: 'get', group: 'kubeloop.dev', resource: 'loops', namespace: 'team-a', name: 'copier' });
    expect(loopAttributes('podset')).toEqual({ verb: 'get', group: 'kubeloop.dev', resource: 'clusterloops', name: 'podset' });
    for (const bad of ['', '/x', 'a/', 'a/b/c']) expect(loopAttributes(bad)).toBeUndefined();
  });

  it('refuses "no such Loop" and "not yours" with one message that names neither a kind nor whether the Loop runs', () => {
    const refusal = notShown('mallory', 'team-a/copier', 'team-a', 'web');
    expect(refusal).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(refusal.message).toBe(
      'user "mallory" cannot get the history of "web" in namespace "team-a" through Loop team-a/copier: it is shown to who may get the object that Loop reconciles, and whether a Loop runs only to who may get the Loop',
    );
    expect(refusal.message).not.toMatch(/configmap|runs on router|reconciles [A-Z]/i);
  });
});
