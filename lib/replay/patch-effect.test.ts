import { describe, expect, it } from 'vitest';
import type { JsonPatchOperation, KubeObject, ReconcileRequest } from '../contract/types.ts';
import { applyToCopy, patchesEquivalent, recordedTarget, testedResourceVersion } from './patch-effect.ts';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'shop', resourceVersion: '7', labels: { app: 'web', old: 'x' } } };
const rv: JsonPatchOperation = { op: 'test', path: '/metadata/resourceVersion', value: '7' };
const label = (op: 'add' | 'replace', value = 'web-0'): JsonPatchOperation => ({ op, path: '/metadata/labels/name', value });

describe('patchesEquivalent', () => {
  it('treats add and replace of a label that exists as the same change', () => {
    const labelled = { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata?.labels, name: 'stale' } } };
    expect(patchesEquivalent(labelled, [rv, label('add')], [rv, label('replace')])).toBe(true);
  });

  it('treats one op on the whole map and one op per key as the same change when the results match', () => {
    const whole: JsonPatchOperation = { op: 'replace', path: '/metadata/labels', value: { app: 'web', old: 'x', name: 'web-0' } };
    expect(patchesEquivalent(pod, [rv, label('add')], [rv, whole])).toBe(true);
  });

  it('tells a patch that drops other labels from one that adds a label', () => {
    const whole: JsonPatchOperation = { op: 'replace', path: '/metadata/labels', value: { name: 'web-0' } };
    expect(patchesEquivalent(pod, [rv, label('add')], [rv, whole])).toBe(false);
  });

  it('fails a replace of a label the object does not have, as the API server would', () => {
    expect(patchesEquivalent(pod, [rv, label('add')], [rv, label('replace')])).toBe(false);
    expect(applyToCopy(pod, [label('replace')])).toMatchObject({ ok: false });
  });

  it('still requires the same resourceVersion test', () => {
    expect(patchesEquivalent(pod, [rv, label('add')], [label('add')])).toBe(false);
    expect(patchesEquivalent(pod, [rv, label('add')], [{ ...rv, value: '6' }, label('add')])).toBe(false);
  });

  it('leaves the recorded object untouched', () => {
    const before = JSON.stringify(pod);
    applyToCopy(pod, [rv, label('add'), { op: 'remove', path: '/metadata/labels/old' }]);
    expect(JSON.stringify(pod)).toBe(before);
  });
});

describe('recordedTarget and testedResourceVersion', () => {
  const child: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'shop' } };
  const request = { object: pod, children: { 'ConfigMap.v1': [child] } } as unknown as ReconcileRequest;

  it('finds the primary (namespace defaulting to the primary s) and children', () => {
    expect(recordedTarget(request, { apiVersion: 'v1', kind: 'Pod', name: 'web-0' })).toBe(pod);
    expect(recordedTarget(request, { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cfg' })).toBe(child);
    expect(recordedTarget(request, { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'other', name: 'cfg' })).toBeUndefined();
  });

  it('reads the tested resourceVersion', () => {
    expect(testedResourceVersion([label('add'), rv])).toBe('7');
    expect(testedResourceVersion([label('add')])).toBeUndefined();
  });
});
