import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { onlyBookkeepingChanged, selectsPrimary, updateTriggers } from './predicates.ts';

function pod(patch: Partial<NonNullable<V1Pod['metadata']>> & { phase?: string } = {}): V1Pod {
  const { phase, ...metadata } = patch;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a', generation: 1, resourceVersion: '1', ...metadata }, status: { phase } };
}

describe('selectsPrimary', () => {
  it('filters by namespace set and label selector', () => {
    const loop = { namespaces: new Set(['a']), selector: { matchLabels: { app: 'x' } } };
    expect(selectsPrimary(loop, pod({ labels: { app: 'x' } }))).toBe(true);
    expect(selectsPrimary(loop, pod({ labels: { app: 'y' } }))).toBe(false);
    expect(selectsPrimary(loop, pod({ namespace: 'b', labels: { app: 'x' } }))).toBe(false);
    expect(selectsPrimary({ namespaces: undefined, selector: undefined }, pod({ namespace: 'b' }))).toBe(true);
  });
});

describe('updateTriggers', () => {
  const ignore = { ignoreStatusChanges: true };
  it('skips a status-only update when ignoreStatusChanges is set', () => {
    expect(updateTriggers(ignore, pod(), pod({ resourceVersion: '2', phase: 'Running' }))).toBe(false);
    expect(updateTriggers({ ignoreStatusChanges: false }, pod(), pod({ resourceVersion: '2', phase: 'Running' }))).toBe(true);
  });
  it('triggers on a new generation, label, annotation, finalizer or deletion', () => {
    expect(updateTriggers(ignore, pod(), pod({ resourceVersion: '2', generation: 2 }))).toBe(true);
    expect(updateTriggers(ignore, pod(), pod({ resourceVersion: '2', labels: { a: 'b' } }))).toBe(true);
    expect(updateTriggers(ignore, pod(), pod({ resourceVersion: '2', annotations: { a: 'b' } }))).toBe(true);
    expect(updateTriggers(ignore, pod(), pod({ resourceVersion: '2', finalizers: ['x'] }))).toBe(true);
    expect(updateTriggers(ignore, pod(), pod({ resourceVersion: '2', deletionTimestamp: new Date(0) }))).toBe(true);
  });
  it('skips, for a metadata-only Loop, an update that changed only the resourceVersion and managedFields', () => {
    const metadataOnly = { ignoreStatusChanges: false, metadataOnly: true };
    const partial = (metadata: Partial<NonNullable<V1Pod['metadata']>>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'a', resourceVersion: '1', ...metadata } });
    expect(updateTriggers(metadataOnly, partial({}), partial({ resourceVersion: '2', managedFields: [{ manager: 'kwok' }] }))).toBe(false);
    expect(updateTriggers(metadataOnly, partial({}), partial({ resourceVersion: '2', labels: { a: 'b' } }))).toBe(true);
    // A full-object Loop sees the status that moved.
    expect(updateTriggers({ ignoreStatusChanges: false }, pod(), pod({ resourceVersion: '2', phase: 'Running' }))).toBe(true);
    expect(updateTriggers(metadataOnly, pod(), pod({ resourceVersion: '2', phase: 'Running' }))).toBe(true);
  });
  it('never triggers on the same resourceVersion', () => {
    expect(updateTriggers({ ignoreStatusChanges: false }, pod(), pod())).toBe(false);
  });
});

describe('onlyBookkeepingChanged', () => {
  const object = (metadata: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ...metadata }, ...rest });
  it('sees resourceVersion and managedFields alone as bookkeeping, anything else as a change', () => {
    expect(onlyBookkeepingChanged(object({ resourceVersion: '1' }), object({ resourceVersion: '2', managedFields: [{ manager: 'kwok' }] }))).toBe(true);
    expect(onlyBookkeepingChanged(object({ resourceVersion: '1' }), object({ resourceVersion: '2', labels: { a: 'b' } }))).toBe(false);
    expect(onlyBookkeepingChanged(object({}), object({}, { status: { phase: 'Running' } }))).toBe(false);
    expect(onlyBookkeepingChanged(object({}, { spec: { a: [1, { b: 2 }] } }), object({}, { spec: { a: [1, { b: 3 }] } }))).toBe(false);
  });
  it('reads members set to undefined as absent, as JSON sends them', () => {
    expect(onlyBookkeepingChanged(object({ labels: undefined }), object({}, { status: undefined }))).toBe(true);
    expect(onlyBookkeepingChanged({ apiVersion: 'v1', kind: 'Pod' }, object({ resourceVersion: '3' }))).toBe(false);
    expect(onlyBookkeepingChanged({ apiVersion: 'v1', kind: 'Pod' }, { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '3' } })).toBe(true);
  });
});
