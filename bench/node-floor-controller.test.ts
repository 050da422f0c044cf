// The Node floor decides as the controller-runtime baseline does, so both label the same pods the same way; with the
// function hop it asks pod-name-label as the router does and PATCHes what the function answers.
import { describe, expect, it } from 'vitest';
import fastJsonPatch from 'fast-json-patch';
import { reconcilePodNameLabel } from '../functions/pod-name-label/reconcile.ts';
import { labelPatch, listedPods, needsPatch, reconcileRequest, replyPatch } from './node-floor-controller.ts';

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

describe('reconcileRequest and replyPatch: the floor with the function hop', () => {
  const config = { annotation: ANNOTATION, label: LABEL };
  const listed = { name: 'web-1', namespace: 'shop', resourceVersion: '40', annotations: { [ANNOTATION]: 'true' }, managedFields: [{ manager: 'kubelet' }] };

  it("asks the function as the router would, and PATCHes the label the function's reply asks for", () => {
    const request = reconcileRequest(listed, new Date('2026-12-02T03:00:00Z'));
    // The router's cache drops managedFields; the function sees the pod's metadata as a metadata-only Loop's.
    expect(request.object).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'shop', resourceVersion: '40', annotations: { [ANNOTATION]: 'true' } } });
    expect(request.now).toBe('2026-12-02T03:00:00.000Z');
    const patch = replyPatch(JSON.stringify(reconcilePodNameLabel(JSON.parse(JSON.stringify(request)) as typeof request, config)));
    // The resourceVersion test is not sent: the router checks it in its cache and sends none either.
    expect(patch!.some((op) => op.path === '/metadata/resourceVersion')).toBe(false);
    const { metadata } = fastJsonPatch.applyPatch(structuredClone(request.object), patch!).newDocument;
    expect(metadata?.labels).toEqual({ [LABEL]: 'web-1' });
  });

  it('sends no PATCH when the function asks for none, and fails on a reply that is no ReconcileResponse', () => {
    const labelled = { ...listed, labels: { [LABEL]: 'web-1' } };
    expect(replyPatch(JSON.stringify(reconcilePodNameLabel(reconcileRequest(labelled, new Date()), config)))).toBeUndefined();
    expect(() => replyPatch('{"statusCode":400}')).toThrow(/no actions/);
  });
});
