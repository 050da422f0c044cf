import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { InformerView } from '../base/informer-view.ts';
import { projectObject } from '../base/related-relation.ts';
import { relatedEvents } from './related-watch.ts';

/** An informer view whose events the test fires by hand. */
function fakeLease() {
  const handlers = new Map<string, (...args: KubeObject[]) => void>();
  const informer = { on: (event: string, handler: (...args: KubeObject[]) => void) => (handlers.set(event, handler), () => handlers.delete(event)) } as unknown as InformerView;
  return { lease: { informer }, fire: (event: string, ...args: KubeObject[]) => handlers.get(event)?.(...args) };
}

const pod = (rv: string, labels: Record<string, string>, phase?: string, image = 'web:1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'a', resourceVersion: rv, labels, managedFields: [{ manager: `m${rv}` }] },
  spec: { containers: [{ name: 'c', image }] },
  ...(phase ? { status: { phase } } : {}),
});

describe('related events', () => {
  it('drops an update of a whole cached object whose projection did not change (a change outside the fields)', () => {
    const seen: KubeObject[][] = [];
    const { lease, fire } = fakeLease();
    relatedEvents(lease, (...states) => seen.push(states), (o) => projectObject(o, ['status']));
    fire('update', pod('2', { app: 'web' }), pod('1', { app: 'web' }));
    fire('update', pod('3', { app: 'web' }, undefined, 'web:2'), pod('2', { app: 'web' }));
    expect(seen).toEqual([]);
    fire('update', pod('3', { app: 'db' }), pod('2', { app: 'web' }));
    fire('update', pod('4', { app: 'db' }, 'Running'), pod('3', { app: 'db' }));
    fire('add', pod('1', {}));
    fire('delete', pod('1', {}));
    expect(seen.map((states) => states.map((s) => s.metadata?.resourceVersion))).toEqual([['3', '2'], ['4', '3'], ['1'], ['1']]);
  });

  it('passes every new resourceVersion of a metadata-only or required object: the version is what tells a content change', () => {
    const seen: KubeObject[][] = [];
    const { lease, fire } = fakeLease();
    relatedEvents(lease, (...states) => seen.push(states));
    fire('update', pod('2', {}), pod('1', {}));
    expect(seen).toHaveLength(1);
  });
});
