import { describe, expect, it } from 'vitest';
import type { JsonPatchOperation, KubeObject } from '../../lib/contract/types.ts';
import { failedGuard, primaryPatch, seenMetadataTests, testedAsSeen } from './seen-metadata.ts';

/** A pod as a metadata-only Loop's function is sent it (PartialObjectMetadata, managedFields dropped): JSON, so its times are strings. */
const seen = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-1',
    namespace: 'a',
    uid: 'u1',
    resourceVersion: '10',
    creationTimestamp: '2026-11-29T10:00:00Z',
    generateName: 'web-',
    generation: 1,
    labels: { app: 'web' },
    annotations: { note: 'a&b' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs1', controller: true }],
  },
} as unknown as KubeObject;
const label: JsonPatchOperation = { op: 'add', path: '/metadata/labels/pod', value: 'web-1' };
const sdkTest: JsonPatchOperation = { op: 'test', path: '/metadata/resourceVersion', value: '10' };
const withMetadata = (metadata: Record<string, unknown>): KubeObject => ({ ...seen, metadata: { ...seen.metadata, ...metadata } });

describe('seenMetadataTests', () => {
  it('tests the uid first, then every field the function saw but bookkeeping and what a write cannot change, and null for each settable field it lacked', () => {
    expect(seenMetadataTests(seen)).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'u1' },
      { op: 'test', path: '/metadata/generateName', value: 'web-' },
      { op: 'test', path: '/metadata/generation', value: 1 },
      { op: 'test', path: '/metadata/labels', value: { app: 'web' } },
      { op: 'test', path: '/metadata/annotations', value: { note: 'a&b' } },
      { op: 'test', path: '/metadata/ownerReferences', value: seen.metadata?.ownerReferences },
      { op: 'test', path: '/metadata/finalizers', value: null },
      { op: 'test', path: '/metadata/deletionTimestamp', value: null },
    ]);
  });

  it('tests a deletion the function saw like any other field', () => {
    const deleting = withMetadata({ deletionTimestamp: '2026-11-29T11:00:00Z', deletionGracePeriodSeconds: 30, finalizers: ['x'] });
    expect(seenMetadataTests(deleting).filter((t) => 'value' in t && t.value === null)).toEqual([]);
    expect(seenMetadataTests(deleting)).toContainEqual({ op: 'test', path: '/metadata/deletionTimestamp', value: '2026-11-29T11:00:00Z' });
  });
});

describe('testedAsSeen', () => {
  it("drops the test of the resourceVersion the function was sent (the SDK's) and leads with the tests of what it saw", () => {
    const { patch, guards } = testedAsSeen([sdkTest, label], seen);
    expect(guards).toEqual(seenMetadataTests(seen));
    expect(patch).toEqual([...guards, label]);
  });

  it('sends no second test of a path the patch tests itself: a large annotations map goes once', () => {
    const own: JsonPatchOperation = { op: 'test', path: '/metadata/annotations', value: { note: 'a&b' } };
    const { patch, guards } = testedAsSeen([sdkTest, own, label], seen);
    expect(patch.filter((op) => op.path === '/metadata/annotations')).toEqual([own]);
    // The guards still hold it: a refusal is judged against what the function saw.
    expect(guards.map((t) => t.path)).toContain('/metadata/annotations');
  });
});

describe('primaryPatch', () => {
  it("tests a metadata-only Loop's primary against what its function saw", () => {
    expect(primaryPatch(true, [sdkTest, label], seen)).toEqual(testedAsSeen([sdkTest, label], seen));
  });

  it('keeps a pinned resourceVersion as it is, and tests the resourceVersion for a Loop that reads whole objects', () => {
    const pinned: JsonPatchOperation[] = [{ op: 'test', path: '/metadata/resourceVersion', value: '9' }, label];
    expect(primaryPatch(true, pinned, seen)).toEqual({ patch: pinned });
    expect(primaryPatch(false, [label], seen)).toEqual({ patch: [sdkTest, label] });
    expect(primaryPatch(false, [sdkTest, label], seen)).toEqual({ patch: [sdkTest, label] });
  });
});

describe('failedGuard', () => {
  const guards = seenMetadataTests(seen);

  it('passes an object that moved only in resourceVersion and managedFields (a status write, a binding)', () => {
    expect(failedGuard(guards, withMetadata({ resourceVersion: '11', managedFields: [{ manager: 'kwok' }] }))).toBeUndefined();
  });

  it('fails an object changed in what the function saw, recreated, or given a field it lacked', () => {
    expect(failedGuard(guards, withMetadata({ labels: { app: 'web', other: 'x' } }))?.path).toBe('/metadata/labels');
    expect(failedGuard(guards, withMetadata({ uid: 'u2' }))?.path).toBe('/metadata/uid');
    expect(failedGuard(guards, withMetadata({ finalizers: ['x'] }))?.path).toBe('/metadata/finalizers');
    expect(failedGuard(guards, withMetadata({ annotations: undefined }))?.path).toBe('/metadata/annotations');
  });

  it('judges a resourceVersion test by the version', () => {
    expect(failedGuard([sdkTest], withMetadata({ resourceVersion: '11' }))).toEqual(sdkTest);
    expect(failedGuard([sdkTest], seen)).toBeUndefined();
  });
});
