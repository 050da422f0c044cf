import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import { CONTROLLER_UID_INDEX, NAMESPACE_INDEX, namespaceOf } from '../../lib/kube/object-store.ts';
import { MemoryInformer } from '../../test/support/memory-informers.ts';
import { NamespaceFanout } from './namespace-fanout.ts';

const owner = { apiVersion: 'x', kind: 'X', name: 'o', uid: 'u', controller: true };
const cm = (namespace: string, name: string, data = 'x'): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ownerReferences: [owner] }, data: { data } }) as KubeObject;

function clusterWide(): MemoryInformer {
  const informer = new MemoryInformer('configmaps');
  informer.store.addIndex(NAMESPACE_INDEX, namespaceOf);
  return informer;
}

describe('NamespaceFanout', () => {
  it("reads only the view's namespaces out of a cluster-wide cache", () => {
    const source = clusterWide();
    for (const object of [cm('a', 'one'), cm('a', 'two'), cm('b', 'three'), cm('c', 'secret')]) source.put(object);
    const view = new NamespaceFanout(source).view(new Set(['a', 'b']));
    expect(view.store.size).toBe(3);
    expect(view.store.list().map((o) => o.metadata?.name).sort()).toEqual(['one', 'three', 'two']);
    expect(view.store.get('b/three')?.metadata?.name).toBe('three');
    expect(view.store.get('c/secret')).toBeUndefined();
    expect(view.store.get('cluster-scoped')).toBeUndefined();
    expect(view.store.byIndex(CONTROLLER_UID_INDEX, 'u')).toHaveLength(3);
    expect(view.store.byIndex(NAMESPACE_INDEX, 'c')).toEqual([]);
    expect(view.store.byIndex(NAMESPACE_INDEX, 'a')).toHaveLength(2);
  });

  it("hands each view only its namespaces' events, and none of a namespace no view covers", () => {
    const source = clusterWide();
    const fanout = new NamespaceFanout(source);
    const seen: Record<string, string[]> = { a: [], b: [] };
    for (const ns of ['a', 'b'] as const) {
      const view = fanout.view(new Set([ns]));
      view.on('add', (o) => seen[ns]!.push(`add ${o.metadata?.namespace}/${o.metadata?.name}`));
      view.on('update', (o, previous) => seen[ns]!.push(`update ${o.metadata?.namespace}/${o.metadata?.name} from ${(previous as { data: { data: string } }).data.data}`));
      view.on('delete', (o) => seen[ns]!.push(`delete ${o.metadata?.namespace}/${o.metadata?.name}`));
    }
    source.put(cm('a', 'one'));
    source.put(cm('b', 'two'));
    source.put(cm('elsewhere', 'three'));
    source.put(cm('a', 'one', 'y'));
    source.remove(cm('b', 'two'));
    source.remove(cm('elsewhere', 'three'));
    expect(seen).toEqual({ a: ['add a/one', 'update a/one from x'], b: ['add b/two', 'delete b/two'] });
  });

  it('hands a view of two namespaces the events of both, each once, and lets go of both at once', () => {
    const source = clusterWide();
    const fanout = new NamespaceFanout(source);
    const added: string[] = [];
    const off = fanout.view(new Set(['a', 'b'])).on('add', (o) => added.push(`${o.metadata?.namespace}/${o.metadata?.name}`));
    for (const ns of ['a', 'b', 'c']) source.put(cm(ns, 'x'));
    expect(added).toEqual(['a/x', 'b/x']);
    off();
    expect(fanout.listenedNamespaces).toBe(0);
  });

  it('passes sync and restarts through and forgets a view once it lets go', async () => {
    const source = clusterWide();
    const fanout = new NamespaceFanout(source);
    const view = fanout.view(new Set(['a']));
    const added: string[] = [];
    let synced = 0;
    const offAdd = view.on('add', (o) => added.push(o.metadata?.name ?? ''));
    const offSynced = view.on('synced', () => (synced += 1));
    expect(view.hasSynced).toBe(false);
    source.sync();
    await view.waitForSync();
    expect([view.hasSynced, synced]).toEqual([true, 1]);
    expect(fanout.listenedNamespaces).toBe(1);
    offAdd();
    offSynced();
    source.put(cm('a', 'late'));
    expect(added).toEqual([]);
    expect(fanout.listenedNamespaces).toBe(0);
  });
});
