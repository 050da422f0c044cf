import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../contract/types.ts';
import { CONTROLLER_UID_INDEX } from '../kube/object-store.ts';
import { childrenKey } from '../contract/children-key.ts';
import { childrenOf, type OwnedStore } from './build-request.ts';

type StoreView = OwnedStore['store'];

const ownedBy = (uid: string, namespace: string | undefined, name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(namespace ? { namespace } : {}), ownerReferences: [{ apiVersion: 'x/v1', kind: 'PodSet', name: 'ps', uid, controller: true }] },
});

function storeOf(objects: KubeObject[]): StoreView {
  return {
    byIndex: (index, value) => (index === CONTROLLER_UID_INDEX ? objects.filter((o) => o.metadata?.ownerReferences?.some((r) => r.controller && r.uid === value)) : []),
  };
}

describe('childrenOf', () => {
  it('counts only children in a namespaced primary\'s namespace, although a forged reference elsewhere names its uid', () => {
    const store = storeOf([ownedBy('u-ps', 'a', 'b-pod'), ownedBy('u-ps', 'kube-system', 'forged'), ownedBy('u-other', 'a', 'theirs'), ownedBy('u-ps', 'a', 'a-pod')]);
    const primary: KubeObject = { apiVersion: 'x/v1', kind: 'PodSet', metadata: { name: 'ps', namespace: 'a', uid: 'u-ps' } };
    const children = childrenOf(primary, [{ kind: { apiVersion: 'v1', kind: 'Pod' }, store }]);
    expect(children[childrenKey('v1', 'Pod')]?.map((c) => c.metadata?.name)).toEqual(['a-pod', 'b-pod']);
  });
  it('counts children in every namespace for a cluster-scoped primary', () => {
    const store = storeOf([ownedBy('u-t', 'a', 'one'), ownedBy('u-t', 'b', 'two')]);
    const primary: KubeObject = { apiVersion: 'x/v1', kind: 'Tenant', metadata: { name: 't', uid: 'u-t' } };
    expect(childrenOf(primary, [{ kind: { apiVersion: 'v1', kind: 'Pod' }, store }])[childrenKey('v1', 'Pod')]?.map((c) => c.metadata?.name)).toEqual(['one', 'two']);
  });
});
