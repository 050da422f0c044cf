import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { InformerCache } from './informer-cache.ts';

const resource = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const object = (name: string, values: number): KubernetesObject & { data: Record<string, string> } => ({
  metadata: { name, namespace: 'a', resourceVersion: '1' },
  data: Object.fromEntries(Array.from({ length: values }, (_, i) => [`k${i}`, 'v'])),
});

function cache() {
  const refused: string[] = [];
  const added: string[] = [];
  const c = new InformerCache<KubernetesObject>({ resource, maxValues: 20, onRefused: (o) => refused.push(o.metadata?.name ?? '') }, 'test');
  c.on('add', (o) => added.push(o.metadata?.name ?? ''));
  return { c, refused, added };
}

describe('InformerCache.apply and the value budget', () => {
  it('counts an event not known to be within the budget and refuses it when over', () => {
    const { c, refused, added } = cache();
    c.apply('ADDED', c.normalise(object('big', 30)), false);
    c.apply('ADDED', c.normalise(object('small', 3)), false);
    expect(refused).toEqual(['big']);
    expect(added).toEqual(['small']);
    expect([...c.store.keys()]).toEqual(['a/small']);
  });

  it('caches an event the reader found within the budget without counting it again', () => {
    const { c, refused, added } = cache();
    c.apply('ADDED', c.normalise(object('small', 3)), false, true);
    expect(refused).toEqual([]);
    expect(added).toEqual(['small']);
  });
});

describe('InformerCache.replace (a relist)', () => {
  const cm = (name: string, uid: string, resourceVersion: string): KubernetesObject => ({ metadata: { name, namespace: 'a', uid, resourceVersion } });

  it('tells handlers what changed while away: a delete as a delete, an object made again under its name as delete and add', () => {
    const c = new InformerCache<KubernetesObject>({ resource }, 'test');
    for (const o of [cm('keep', 'k', '1'), cm('changed', 'c', '1'), cm('doomed', 'd', '1'), cm('reborn', 'r1', '1')]) c.apply('ADDED', c.normalise(o), false);
    const seen: string[] = [];
    c.on('add', (o) => seen.push(`add ${o.metadata?.name} ${o.metadata?.uid}`));
    c.on('update', (o, previous) => seen.push(`update ${o.metadata?.name} ${previous.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`));
    c.on('delete', (o) => seen.push(`delete ${o.metadata?.name} ${o.metadata?.uid}`));
    const gathered = { fresh: new Map<string, KubernetesObject>(), refused: new Set<string>() };
    const items = [cm('keep', 'k', '1'), cm('changed', 'c', '2'), cm('reborn', 'r2', '3'), cm('born', 'b', '4')].map((o) => c.gatherItem(gathered, c.normalise(o)));
    const { fresh, refused } = c.listed(gathered, items);
    c.replace(fresh, refused, undefined);
    expect(seen).toEqual(['delete doomed d', 'update changed 1->2', 'delete reborn r1', 'add reborn r2', 'add born b']);
    expect([...c.store.keys()].sort()).toEqual(['a/born', 'a/changed', 'a/keep', 'a/reborn']);
    expect(c.store.get('a/reborn')?.metadata?.uid).toBe('r2');
  });
});

describe('InformerCache gathering a list', () => {
  it('tells gathered handlers of each admitted item as it arrives, while the store holds none of them until the replace', () => {
    const c = new InformerCache<KubernetesObject>({ resource, maxValues: 10 }, 'test');
    const seen: string[] = [];
    c.on('gathered', (o) => seen.push(`${o.metadata?.name} (${c.store.size} cached)`));
    const state = { fresh: new Map<string, KubernetesObject>(), refused: new Set<string>() };
    const big = { metadata: { name: 'big', namespace: 'a' }, data: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'v'])) };
    const items = [{ metadata: { name: 'one', namespace: 'a' } }, big, { metadata: { name: 'two', namespace: 'a' } }].map((o) => c.gatherItem(state, c.normalise(o)));
    expect(seen).toEqual(['one (0 cached)', 'two (0 cached)']);
    const { fresh, refused } = c.listed(state, items);
    expect([[...fresh.keys()], [...refused]]).toEqual([['a/one', 'a/two'], ['a/big']]);
  });
});

describe('InformerCache gathering a WatchList', () => {
  it('tells gathered handlers of each initial event as it arrives (not one over the budget), the store empty until the bookmark', () => {
    const c = new InformerCache<KubernetesObject>({ resource }, 'test');
    const seen: string[] = [];
    c.on('gathered', (o) => seen.push(`${o.metadata?.name} (${c.store.size} cached)`));
    const state = { fresh: new Map<string, KubernetesObject>(), refused: new Set<string>() };
    const end = { metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } };
    const events = [
      { type: 'ADDED' as const, object: { metadata: { name: 'one', namespace: 'a' } } },
      { type: 'ADDED' as const, object: { metadata: { name: 'big', namespace: 'a' } }, oversized: true as const },
      { type: 'ADDED' as const, object: { metadata: { name: 'two', namespace: 'a' } } },
    ];
    expect(events.map((e) => c.gather(state, e))).toEqual([false, false, false]);
    expect(seen).toEqual(['one (0 cached)', 'two (0 cached)']);
    expect(c.gather(state, { type: 'BOOKMARK', object: end })).toBe(true);
  });
});
