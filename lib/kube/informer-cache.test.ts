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
