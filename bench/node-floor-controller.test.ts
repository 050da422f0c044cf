// The Node floor decides as the controller-runtime baseline does, so both label the same pods the same way.
import { describe, expect, it } from 'vitest';
import { labelPatch, listedPods, needsPatch } from './node-floor-controller.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';

describe('needsPatch and labelPatch', () => {
  it('labels an annotated pod with its name, and mends a label that names another pod', () => {
    const pod = { name: 'web-1', annotations: { [ANNOTATION]: 'true' } };
    expect(needsPatch(pod, ANNOTATION, LABEL)).toBe(true);
    expect(JSON.parse(labelPatch(pod, ANNOTATION, LABEL))).toEqual({ metadata: { labels: { [LABEL]: 'web-1' } } });
    expect(needsPatch({ ...pod, labels: { [LABEL]: 'web-2' } }, ANNOTATION, LABEL)).toBe(true);
    expect(needsPatch({ ...pod, labels: { [LABEL]: 'web-1' } }, ANNOTATION, LABEL)).toBe(false);
  });

  it('removes the label from a pod that no longer asks for it, and leaves one that never had it', () => {
    const pod = { name: 'web-1', annotations: { [ANNOTATION]: 'false' }, labels: { [LABEL]: 'web-1' } };
    expect(needsPatch(pod, ANNOTATION, LABEL)).toBe(true);
    expect(JSON.parse(labelPatch(pod, ANNOTATION, LABEL))).toEqual({ metadata: { labels: { [LABEL]: null } } });
    expect(needsPatch({ name: 'web-1' }, ANNOTATION, LABEL)).toBe(false);
  });

  it('leaves a pod being deleted, and one whose name is too long for a label value', () => {
    expect(needsPatch({ name: 'web-1', deletionTimestamp: '2026-12-01T00:00:00Z', annotations: { [ANNOTATION]: 'true' } }, ANNOTATION, LABEL)).toBe(false);
    expect(needsPatch({ name: 'w'.repeat(64), annotations: { [ANNOTATION]: 'true' } }, ANNOTATION, LABEL)).toBe(false);
  });
});

describe('listedPods', () => {
  it("reads a metadata-only list's pods and resourceVersion, and an empty namespace's null items as none", () => {
    const list = { kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '42' }, items: [{ metadata: { name: 'web-1', resourceVersion: '40' } }] };
    expect(listedPods(JSON.stringify(list))).toEqual({ resourceVersion: '42', items: [{ name: 'web-1', resourceVersion: '40' }] });
    expect(listedPods(JSON.stringify({ ...list, items: null }))).toEqual({ resourceVersion: '42', items: [] });
  });
});
