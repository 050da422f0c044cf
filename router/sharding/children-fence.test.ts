import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import { settledOwners } from './children-fence.ts';

const pod = (uid: string, owner: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: uid, uid, ownerReferences: [{ apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', name: owner, uid: owner, controller: true }] },
});

describe('settledOwners', () => {
  const cache = new Map<string, KubeObject[]>([
    ['ps-1', [pod('p1', 'ps-1'), pod('p2', 'ps-1')]],
    ['ps-2', [pod('p3', 'ps-2')]],
    ['ps-3', [pod('p5', 'ps-3'), pod('p6', 'ps-3')]],
  ]);
  const cached = (uid: string) => cache.get(uid) ?? [];

  it('starts an owner whose cached children are exactly the listed ones, in any order', () => {
    expect(settledOwners(['ps-1'], [pod('p2', 'ps-1'), pod('p1', 'ps-1'), pod('x', 'other')], cached)).toEqual(new Set(['ps-1']));
  });

  it('holds an owner whose create the cache has not seen yet (a PodSet would create the pod twice)', () => {
    expect(settledOwners(['ps-2'], [pod('p3', 'ps-2'), pod('p4', 'ps-2')], cached)).toEqual(new Set());
  });

  it('holds an owner whose delete the cache has not seen yet', () => {
    expect(settledOwners(['ps-3'], [pod('p5', 'ps-3')], cached)).toEqual(new Set());
  });

  it('starts an owner without children on either side', () => {
    expect(settledOwners(['ps-4'], [], cached)).toEqual(new Set(['ps-4']));
  });
});
