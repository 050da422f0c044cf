import { describe, expect, it } from 'vitest';
import { validateReconcileResponse as validateResponse } from '../contract/validate.ts';
import type { ReconcileRequest } from '../contract/types.ts';
import { respond } from './actions.ts';
import { isRelatedSent, relatedNamed, relatedOf, requires } from './related.ts';

const request = (related?: ReconcileRequest['related']): ReconcileRequest => ({
  apiVersion: 'kubeloop.dev/v1',
  kind: 'ReconcileRequest',
  loop: 'l',
  trigger: { type: 'ADDED' },
  object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
  children: {},
  ...(related ? { related } : {}),
  now: '2026-01-01T00:00:00Z',
});

describe('relatedOf', () => {
  it('returns the objects of an entry, [] for an empty or absent one, and tells absent from empty', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' } };
    const r = request({ config: [cm], none: [] });
    expect(relatedOf(r, 'config')).toEqual([cm]);
    expect(relatedNamed(r, 'config', 'c')).toEqual(cm);
    expect(relatedNamed(r, 'config', 'c', 'other')).toBeUndefined();
    expect(relatedOf(r, 'none')).toEqual([]);
    expect(isRelatedSent(r, 'none')).toBe(true);
    expect(isRelatedSent(r, 'absent')).toBe(false);
    expect(relatedOf(request(), 'config')).toEqual([]);
  });
});

describe('requires', () => {
  it('builds entries the contract schema accepts', () => {
    const response = respond([], {
      requires: [
        requires('db', { apiVersion: 'v1', kind: 'Secret' }, { names: 'db-credentials' }),
        requires('peers', { apiVersion: 'v1', kind: 'Pod' }, { selector: { matchLabels: { app: 'db' } }, namespace: 'data' }),
      ],
    });
    expect(response.requires).toEqual([
      { name: 'db', apiVersion: 'v1', kind: 'Secret', names: ['db-credentials'] },
      { name: 'peers', apiVersion: 'v1', kind: 'Pod', namespace: 'data', selector: { matchLabels: { app: 'db' } } },
    ]);
    expect(validateResponse(response).ok).toBe(true);
  });
  it('a requires entry with both names and a selector is refused by the schema', () => {
    const bad = respond([], { requires: [{ name: 'x', apiVersion: 'v1', kind: 'Secret', names: ['a'], selector: {} }] });
    expect(validateResponse(bad).ok).toBe(false);
  });
});
