import { describe, expect, it } from 'vitest';
import { addFinalizerPatch, prepareChild, removeFinalizerPatch, retestResourceVersion, statusPatch, testsOtherResourceVersion, withResourceVersionTest } from './patch-building.ts';

const primary = {
  apiVersion: 'app.kubeloop.dev/v1alpha1',
  kind: 'PodSet',
  metadata: { name: 'ps', namespace: 'a', uid: 'u1', generation: 3, resourceVersion: '42' },
  status: { replicas: 2, observedGeneration: 3 },
};

describe('withResourceVersionTest', () => {
  it('adds a leading test unless the patch tests the resourceVersion already', () => {
    expect(withResourceVersionTest([{ op: 'remove', path: '/x' }], '7')[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '7' });
    const tested = [{ op: 'test' as const, path: '/metadata/resourceVersion', value: '1' }];
    expect(withResourceVersionTest(tested, '7')).toBe(tested);
  });
});

describe('retestResourceVersion', () => {
  const label = { op: 'add' as const, path: '/metadata/labels/a', value: '10' };
  const patch = [{ op: 'test' as const, path: '/metadata/resourceVersion', value: '10' }, label];

  it('moves only the resourceVersion test of the version the function was sent', () => {
    expect(retestResourceVersion(patch, '10', '11')).toEqual([{ op: 'test', path: '/metadata/resourceVersion', value: '11' }, label]);
    expect(retestResourceVersion(patch, '9', '11')).toEqual(patch);
  });

  it('tells a test of another version (a pinned one) from the test of the version sent', () => {
    expect(testsOtherResourceVersion(patch, '10')).toBe(false);
    expect(testsOtherResourceVersion(patch, '9')).toBe(true);
    expect(testsOtherResourceVersion([label], '9')).toBe(false);
  });
});

describe('statusPatch', () => {
  it('is undefined when the status (with observedGeneration) would not change, in any key order', () => {
    expect(statusPatch(primary, { replicas: 2 })).toBeUndefined();
  });
  it('sets observedGeneration and tests the resourceVersion', () => {
    expect(statusPatch(primary, { replicas: 3 })).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'add', path: '/status', value: { replicas: 3, observedGeneration: 3 } },
    ]);
  });
});

describe('finalizer patches', () => {
  it('creates the list or appends to it, and removes by a tested index', () => {
    expect(addFinalizerPatch(primary, 'kubeloop.dev/x')[1]).toEqual({ op: 'add', path: '/metadata/finalizers', value: ['kubeloop.dev/x'] });
    const held = { ...primary, metadata: { ...primary.metadata, finalizers: ['other', 'kubeloop.dev/x'] } };
    expect(addFinalizerPatch(held, 'y')[1]).toEqual({ op: 'add', path: '/metadata/finalizers/-', value: 'y' });
    expect(removeFinalizerPatch(held, 'kubeloop.dev/x')).toEqual([
      { op: 'test', path: '/metadata/finalizers/1', value: 'kubeloop.dev/x' },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    expect(removeFinalizerPatch(primary, 'kubeloop.dev/x')).toBeUndefined();
  });
});

describe('prepareChild', () => {
  it('fills in the namespace and the controller reference to the primary', () => {
    const child = prepareChild({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'ps-' } }, primary, true);
    expect(child.metadata?.namespace).toBe('a');
    expect(child.metadata?.ownerReferences).toEqual([
      { apiVersion: primary.apiVersion, kind: 'PodSet', name: 'ps', uid: 'u1', controller: true, blockOwnerDeletion: true },
    ]);
  });
  it('keeps an existing controller reference', () => {
    const ref = { apiVersion: primary.apiVersion, kind: 'PodSet', name: 'ps', uid: 'u1', controller: true };
    const child = prepareChild({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a', ownerReferences: [ref] } }, primary, true);
    expect(child.metadata?.ownerReferences).toEqual([ref]);
  });
});
