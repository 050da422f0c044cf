// applyLocally: the objects `kubeloop render` prints after a function's actions, without an API server.
import { describe, expect, it } from 'vitest';
import { requestFor } from '../../lib/testing/requests.ts';
import { create, event, patchAction, remove, respond } from '../../lib/sdk/actions.ts';
import { applyLocally } from './apply-locally.ts';

const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'shop', uid: 'u1', resourceVersion: '5', labels: { a: '1' } as Record<string, string> }, spec: { size: 2 } };
const stale = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'old', namespace: 'shop', uid: 'c1', resourceVersion: '9' } };

describe('applyLocally', () => {
  it('applies patches and status to the primary, adds created children, lists deletes and events', () => {
    const request = requestFor(widget, { children: { 'ConfigMap.v1': [stale] } });
    const response = respond([
      patchAction(widget, (draft) => {
        draft.metadata!.labels = { a: '1', b: '2' };
      }),
      { op: 'status', status: { ready: true } },
      create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'new', namespace: 'shop' }, data: { k: 'v' } } as never),
      remove(stale),
      event('Normal', 'Synced', 'synced w'),
    ]);
    const rendered = applyLocally(request, response);
    expect(rendered.objects).toEqual([
      { ...widget, metadata: { ...widget.metadata, labels: { a: '1', b: '2' } }, status: { ready: true } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'new', namespace: 'shop' }, data: { k: 'v' } },
    ]);
    expect(rendered.deleted).toEqual(['v1 ConfigMap shop/old']);
    expect(rendered.events).toEqual([{ type: 'Normal', reason: 'Synced', message: 'synced w' }]);
    expect(rendered.problems).toEqual([]);
    // The request's objects are not modified.
    expect(request.object.metadata?.labels).toEqual({ a: '1' });
  });

  it('reports a patch the server would refuse instead of throwing', () => {
    const response = respond([
      { op: 'patch', target: { apiVersion: 'example.com/v1', kind: 'Widget', namespace: 'shop', name: 'w' }, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '4' }] },
      { op: 'patch', target: { apiVersion: 'v1', kind: 'Secret', namespace: 'shop', name: 'x' }, patch: [] },
    ]);
    const rendered = applyLocally(requestFor(widget), response);
    expect(rendered.problems).toHaveLength(2);
    expect(rendered.problems[0]).toMatch(/^action #0 \(patch\) on example\.com\/v1 Widget shop\/w: Test operation failed/);
    expect(rendered.problems[1]).toMatch(/v1 Secret shop\/x is neither the primary nor one of the children given/);
    expect(rendered.objects).toEqual([]);
  });
});
