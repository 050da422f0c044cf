import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import { Informer } from '../../lib/kube/informer.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { CONTROLLER_UID_INDEX, controllerUidOf } from '../../lib/kube/object-store.ts';
import { combineInformers } from './informer-view.ts';

const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
function informer(namespace: string, names: string[]): Informer<KubeObject> {
  // Never started: only its store is used.
  const i = new Informer<KubeObject>({ client: {} as KubeClient, resource, namespace, indexers: { [CONTROLLER_UID_INDEX]: controllerUidOf } });
  for (const name of names) {
    i.store.upsert({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, ownerReferences: [{ apiVersion: 'x', kind: 'X', name: 'o', uid: 'u', controller: true }] } });
  }
  return i;
}

describe('combineInformers', () => {
  it('reads per-namespace caches as one', () => {
    const view = combineInformers(new Map([['a', informer('a', ['p1', 'p2'])], ['b', informer('b', ['p3'])]]));
    expect(view.store.size).toBe(3);
    expect(view.store.get('b/p3')?.metadata?.name).toBe('p3');
    expect(view.store.get('c/p3')).toBeUndefined();
    expect(view.store.byIndex(CONTROLLER_UID_INDEX, 'u').map((p) => p.metadata?.name).sort()).toEqual(['p1', 'p2', 'p3']);
    expect(view.store.list()).toHaveLength(3);
  });
  it('returns a single informer unchanged', () => {
    const only = informer('a', []);
    expect(combineInformers(new Map([['a', only]]))).toBe(only);
  });
});
