import { describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { ReconcileRecord } from '../reconcile/flight-recorder.ts';
import { requestScopes, servedEntries } from './request-access.ts';

const request = {
  apiVersion: 'kubeloop.dev/v1alpha1',
  kind: 'ReconcileRequest',
  loop: 'l',
  trigger: { type: 'MODIFIED' },
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'a' } },
  children: { 'Pod.v1': [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1', namespace: 'a' } }, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2', namespace: 'a' } }] },
  related: { nodes: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }], secret: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'b' } }] },
  now: '2026-01-01T00:00:00Z',
} as unknown as ReconcileRequest;

const entry = (outcome: string, withRequest: boolean): ReconcileRecord => ({
  startedAt: '2026-01-01T00:00:00.000Z',
  triggers: [],
  actions: [],
  writes: [],
  outcome,
  durations: { queueMs: 0, totalMs: 1 },
  ...(withRequest ? { request } : {}),
});

describe('requestScopes', () => {
  it('lists each kind once per namespace it is held in, the primary first, cluster-scoped ones without a namespace', () => {
    expect(requestScopes(request)).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'a' },
      { apiVersion: 'v1', kind: 'Pod', namespace: 'a' },
      { apiVersion: 'v1', kind: 'Node', namespace: undefined },
      { apiVersion: 'v1', kind: 'Secret', namespace: 'b' },
    ]);
  });
});

describe('servedEntries', () => {
  it('shows the request only when allowed, and says why when it is withheld', () => {
    const entries = [entry('a', false), entry('b', true)];
    expect(servedEntries(entries, { shown: true })[1]?.request).toBe(request);
    const withheld = servedEntries(entries, { shown: false, why: 'it holds secrets in namespace b, which user "bob" may not get' });
    expect(withheld[1]).not.toHaveProperty('request');
    expect(withheld[1]?.requestOmitted).toContain('secrets in namespace b');
    expect(withheld[0]).toEqual(entry('a', false));
  });
});
