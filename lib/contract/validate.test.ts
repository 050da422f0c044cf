import { describe, expect, it } from 'vitest';
import { childrenKey, parseChildrenKey } from './children-key.ts';
import { validateReconcileRequest, validateReconcileResponse } from './validate.ts';

const request = {
  apiVersion: 'kubeloop.dev/v1',
  kind: 'ReconcileRequest',
  loop: 'podset',
  reconcileId: 'rec-1',
  trigger: { type: 'CHILD', child: { apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p' } },
  object: { apiVersion: 'apps.kubeloop.dev/v1', kind: 'PodSet', metadata: { name: 'web', namespace: 'a' } },
  children: { 'Pod.v1': [] },
  now: '2026-11-22T10:00:00Z',
};

const response = (actions: unknown[], extra: Record<string, unknown> = {}) => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions, ...extra });

describe('validateReconcileRequest', () => {
  it('accepts a complete request and ignores fields it does not know', () => {
    expect(validateReconcileRequest({ ...request, futureField: 1 }).ok).toBe(true);
  });

  it.each([
    [{ ...request, trigger: { type: 'POKE' } }, '/trigger/type must be equal to one of the allowed values: ["ADDED","MODIFIED","DELETED","RESYNC","REQUEUE","CHILD","RELATED"]'],
    [{ ...request, now: 'yesterday' }, '/now must match format "date-time"'],
    [{ ...request, children: { 'Pod.v1': [{ kind: 'Pod' }] } }, "/children/Pod.v1/0 must have required property 'apiVersion'"],
    [{ ...request, reconcileId: 'has spaces in it' }, '/reconcileId must match pattern "^[!-~]{1,128}$"'],
    [{ ...request, apiVersion: 'kubeloop.dev/v2' }, '/apiVersion must be equal to constant: "kubeloop.dev/v1"'],
  ])('explains what is wrong with %j', (value, message) => {
    const result = validateReconcileRequest(value);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toContain(message);
  });
});

describe('validateReconcileResponse', () => {
  it('accepts every action kind', () => {
    const target = { apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'p' };
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } };
    const all = [
      { op: 'patch', target, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '1' }] },
      { op: 'create', object: pod },
      { op: 'apply', object: pod },
      { op: 'delete', target, preconditions: { uid: 'u' } },
      { op: 'status', status: { ready: true } },
      { op: 'event', type: 'Warning', reason: 'Bad', message: 'bad' },
    ];
    expect(validateReconcileResponse(response(all, { requeueAfterSeconds: 5, finalized: true, error: { type: 'temporary', message: 'x' } })).ok).toBe(true);
  });

  it('reports the field of the action that is wrong, not every branch of the union', () => {
    const result = validateReconcileResponse(response([{ op: 'event', type: 'Info', reason: 'X', message: 'm' }]));
    expect(result).toEqual({ ok: false, errors: ['/actions/0/type must be equal to one of the allowed values: ["Normal","Warning"]'] });
  });

  it('rejects an unknown op and an empty patch', () => {
    const unknown = validateReconcileResponse(response([{ op: 'scale' }]));
    expect(unknown.ok).toBe(false);
    const empty = validateReconcileResponse(response([{ op: 'patch', target: { apiVersion: 'v1', kind: 'Pod', name: 'p' }, patch: [] }]));
    expect(empty.ok === false && empty.errors).toEqual(['/actions/0/patch must NOT have fewer than 1 items']);
  });
});

describe('childrenKey', () => {
  it('is Kind.version for the core group and Kind.group/version otherwise, and parses back', () => {
    expect(childrenKey('v1', 'Pod')).toBe('Pod.v1');
    expect(childrenKey('apps/v1', 'Deployment')).toBe('Deployment.apps/v1');
    expect(parseChildrenKey('Deployment.apps/v1')).toEqual({ kind: 'Deployment', apiVersion: 'apps/v1' });
    expect(() => parseChildrenKey('Deployment')).toThrow(/invalid children key/);
  });
});
