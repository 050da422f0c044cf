import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_UID_INDEX, ObjectStore, controllerUidOf } from './object-store.ts';

function pod(name: string, owner?: string, controller = true): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'ns',
      ownerReferences: owner ? [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: owner, controller }] : [],
    },
  };
}

describe('ObjectStore', () => {
  it('finds children by controller owner uid and follows re-parenting', () => {
    const store = new ObjectStore<V1Pod>({ [CONTROLLER_UID_INDEX]: controllerUidOf });
    store.upsert(pod('a', 'u1'));
    store.upsert(pod('b', 'u1'));
    store.upsert(pod('c', 'u2'));
    expect(store.byIndex(CONTROLLER_UID_INDEX, 'u1').map((p) => p.metadata?.name).sort()).toEqual(['a', 'b']);
    store.upsert(pod('b', 'u2'));
    expect(store.byIndex(CONTROLLER_UID_INDEX, 'u1').map((p) => p.metadata?.name)).toEqual(['a']);
    store.delete('ns/a');
    expect(store.byIndex(CONTROLLER_UID_INDEX, 'u1')).toEqual([]);
  });
  it('ignores owner references that are not the controller', () => {
    const store = new ObjectStore<V1Pod>({ [CONTROLLER_UID_INDEX]: controllerUidOf });
    store.upsert(pod('a', 'u1', false));
    expect(store.byIndex(CONTROLLER_UID_INDEX, 'u1')).toEqual([]);
  });
  it('indexes existing objects when an index is added later', () => {
    const store = new ObjectStore<V1Pod>();
    store.upsert(pod('a', 'u1'));
    store.addIndex(CONTROLLER_UID_INDEX, controllerUidOf);
    expect(store.byIndex(CONTROLLER_UID_INDEX, 'u1')).toHaveLength(1);
  });
  it('returns the previous object on upsert and delete', () => {
    const store = new ObjectStore<V1Pod>();
    expect(store.upsert(pod('a'))).toBeUndefined();
    expect(store.upsert(pod('a'))?.metadata?.name).toBe('a');
    expect(store.delete('ns/a')?.metadata?.name).toBe('a');
    expect(store.delete('ns/a')).toBeUndefined();
    expect(store.size).toBe(0);
  });
  it('serves the newest version under unchanged index values and moves only the values that changed', () => {
    const labels = (o: V1Pod) => Object.keys(o.metadata?.labels ?? {}).sort();
    const store = new ObjectStore<V1Pod>({ labels, [CONTROLLER_UID_INDEX]: controllerUidOf });
    const labelled = (resourceVersion: string, keys: string[]): V1Pod => ({ ...pod('a', 'u1'), metadata: { ...pod('a', 'u1').metadata, resourceVersion, labels: Object.fromEntries(keys.map((k) => [k, 'v'])) } });
    store.upsert(labelled('1', ['x', 'y']));
    store.upsert(labelled('2', ['x', 'y']));
    expect(store.byIndex('labels', 'x').map((p) => p.metadata?.resourceVersion)).toEqual(['2']);
    expect(store.byIndex(CONTROLLER_UID_INDEX, 'u1').map((p) => p.metadata?.resourceVersion)).toEqual(['2']);
    store.upsert(labelled('3', ['y', 'z']));
    expect(store.byIndex('labels', 'x')).toEqual([]);
    expect(store.byIndex('labels', 'y').map((p) => p.metadata?.resourceVersion)).toEqual(['3']);
    expect(store.byIndex('labels', 'z').map((p) => p.metadata?.resourceVersion)).toEqual(['3']);
    expect(store.byIndex(CONTROLLER_UID_INDEX, 'u1').map((p) => p.metadata?.resourceVersion)).toEqual(['3']);
    store.delete('ns/a');
    expect([store.byIndex('labels', 'y'), store.byIndex('labels', 'z'), store.byIndex(CONTROLLER_UID_INDEX, 'u1')]).toEqual([[], [], []]);
  });
});
