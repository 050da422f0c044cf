import { describe, expect, it } from 'vitest';
import fastJsonPatch from 'fast-json-patch';
import { validateReconcileResponse } from '../../lib/contract/validate.ts';
import type { KubeObject, PatchAction, ReconcileResponse } from '../../lib/sdk/index.ts';
import { kubeObject, requestFor, variant } from '../../test/support/reconcile-request.ts';
import { POD_NAME_LABEL_DEFAULTS, readPodNameLabelConfig } from './config.ts';
import { reconcilePodNameLabel } from './reconcile.ts';

const ANNOTATION = 'kubeloop.dev/add-pod-name-label';
const LABEL = 'kubeloop.dev/pod-name';

// What a metadata-only watch delivers: PartialObjectMetadata with the Pod's apiVersion/kind and no spec/status.
const annotatedPod = kubeObject({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-7d4b9c8f6d-x2x7q',
    generateName: 'web-7d4b9c8f6d-',
    namespace: 'shop',
    uid: '5e0c8a52-9a53-4f3e-b0b1-1c2d3e4f5a6b',
    resourceVersion: '1042',
    creationTimestamp: '2026-11-22T09:59:58Z',
    labels: { app: 'web', 'pod-template-hash': '7d4b9c8f6d' },
    annotations: { [ANNOTATION]: 'true' },
  },
});

function reconcile(object: KubeObject, config = POD_NAME_LABEL_DEFAULTS, trigger: 'MODIFIED' | 'DELETED' = 'MODIFIED') {
  const response = reconcilePodNameLabel(requestFor(object, { trigger }), config);
  expect(validateReconcileResponse(response).ok).toBe(true);
  return response;
}

function onlyPatch(response: ReconcileResponse): PatchAction {
  expect(response.actions).toHaveLength(1);
  const action = response.actions[0];
  if (action?.op !== 'patch') throw new Error(`expected a patch, got ${JSON.stringify(action)}`);
  return action;
}

function applied(object: KubeObject, action: PatchAction): KubeObject {
  return fastJsonPatch.applyPatch(structuredClone(object), action.patch, true).newDocument;
}

describe('pod-name-label reconcile', () => {
  it('adds the pod-name label to an annotated pod with a resourceVersion test first', () => {
    const action = onlyPatch(reconcile(annotatedPod));
    expect(action.target).toEqual({ apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-7d4b9c8f6d-x2x7q' });
    expect(action.patch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '1042' },
      { op: 'add', path: '/metadata/labels/kubeloop.dev~1pod-name', value: 'web-7d4b9c8f6d-x2x7q' },
    ]);
    expect(applied(annotatedPod, action).metadata?.labels).toEqual({
      app: 'web',
      'pod-template-hash': '7d4b9c8f6d',
      [LABEL]: 'web-7d4b9c8f6d-x2x7q',
    });
  });

  it('adds the labels map when the pod has no labels at all', () => {
    const bare = variant(annotatedPod, (p) => delete p.metadata!.labels);
    const action = onlyPatch(reconcile(bare));
    expect(applied(bare, action).metadata?.labels).toEqual({ [LABEL]: 'web-7d4b9c8f6d-x2x7q' });
  });

  it('corrects a label whose value is not the pod name', () => {
    const wrong = variant(annotatedPod, (p) => (p.metadata!.labels![LABEL] = 'someone-else'));
    const action = onlyPatch(reconcile(wrong));
    expect(action.patch).toContainEqual({ op: 'replace', path: '/metadata/labels/kubeloop.dev~1pod-name', value: 'web-7d4b9c8f6d-x2x7q' });
  });

  it('does nothing when an annotated pod already carries the right label', () => {
    const right = variant(annotatedPod, (p) => (p.metadata!.labels![LABEL] = 'web-7d4b9c8f6d-x2x7q'));
    expect(reconcile(right).actions).toEqual([]);
  });

  it('removes the label when the annotation is gone', () => {
    const unannotated = variant(annotatedPod, (p) => {
      p.metadata!.annotations = {};
      p.metadata!.labels![LABEL] = 'web-7d4b9c8f6d-x2x7q';
    });
    const action = onlyPatch(reconcile(unannotated));
    expect(action.patch).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '1042' },
      { op: 'remove', path: '/metadata/labels/kubeloop.dev~1pod-name' },
    ]);
  });

  it.each(['false', 'True', 'yes', ''])('treats annotation value %j as absent and removes a stale label', (value) => {
    const pod = variant(annotatedPod, (p) => {
      p.metadata!.annotations![ANNOTATION] = value;
      p.metadata!.labels![LABEL] = 'stale-value';
    });
    expect(applied(pod, onlyPatch(reconcile(pod))).metadata?.labels).toEqual({ app: 'web', 'pod-template-hash': '7d4b9c8f6d' });
  });

  it('does nothing for an unannotated pod without the label', () => {
    expect(reconcile(variant(annotatedPod, (p) => delete p.metadata!.annotations)).actions).toEqual([]);
  });

  it('leaves a pod that is being deleted alone', () => {
    const deleting = variant(annotatedPod, (p) => (p.metadata!.deletionTimestamp = new Date('2026-11-22T10:00:00Z')));
    expect(reconcile(deleting)).toEqual({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] });
  });

  it('leaves a pod alone when the trigger says it was deleted', () => {
    expect(reconcile(annotatedPod, POD_NAME_LABEL_DEFAULTS, 'DELETED').actions).toEqual([]);
  });

  it('warns instead of patching when the pod name is too long to be a label value', () => {
    const name = `batch-${'x'.repeat(60)}`;
    const long = variant(annotatedPod, (p) => (p.metadata!.name = name));
    const response = reconcile(long);
    expect(response.actions).toEqual([
      {
        op: 'event',
        type: 'Warning',
        reason: 'PodNameTooLong',
        message: `pod name "${name}" has 66 characters; label ${LABEL} cannot hold it (a label value has at most 63)`,
      },
    ]);
    expect(response.error).toBeUndefined();
  });

  it('labels a pod whose name is exactly 63 characters', () => {
    const name = 'y'.repeat(63);
    const action = onlyPatch(reconcile(variant(annotatedPod, (p) => (p.metadata!.name = name))));
    expect(action.patch).toContainEqual({ op: 'add', path: '/metadata/labels/kubeloop.dev~1pod-name', value: name });
  });

  it('uses the seed keys padok.fr/... when configured so', () => {
    const config = readPodNameLabelConfig({
      KUBELOOP_POD_NAME_ANNOTATION: 'padok.fr/add-pod-name-label',
      KUBELOOP_POD_NAME_LABEL: 'padok.fr/pod-name',
    });
    const seedPod = variant(annotatedPod, (p) => (p.metadata!.annotations = { 'padok.fr/add-pod-name-label': 'true' }));
    expect(onlyPatch(reconcile(seedPod, config)).patch).toContainEqual({
      op: 'add',
      path: '/metadata/labels/padok.fr~1pod-name',
      value: 'web-7d4b9c8f6d-x2x7q',
    });
    // The default keys mean nothing under that configuration.
    expect(reconcile(annotatedPod, config).actions).toEqual([]);
  });

  it('answers a pod without a name with a permanent error', () => {
    const nameless = variant(annotatedPod, (p) => delete p.metadata!.name);
    expect(reconcile(nameless).error).toEqual({ type: 'permanent', message: 'the pod has no metadata.name' });
  });

  it('produces a patch that fails against a pod changed since it was read', () => {
    const action = onlyPatch(reconcile(annotatedPod));
    const newer = variant(annotatedPod, (p) => (p.metadata!.resourceVersion = '1043'));
    expect(() => fastJsonPatch.applyPatch(newer, action.patch, true)).toThrow(/Test operation failed/);
  });
});
