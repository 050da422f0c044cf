// A tiny function for the runtime's HTTP tests: labels the object, and misbehaves on request (label
// "test.kubeloop.dev/misbehave": "throw" | "invalid-reply" | "promise") to exercise the 500 paths.
import type { KubeObject, ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { defineFunction } from '../../lib/sdk/define-function.ts';
import { event, patchAction, pointerEscape, respond } from '../../lib/sdk/actions.ts';

export const MISBEHAVE_LABEL = 'test.kubeloop.dev/misbehave';

export const exampleFunction = defineFunction({
  name: 'example-labeller',
  reconcile(request: ReconcileRequest): ReconcileResponse {
    const labels = request.object.metadata?.labels ?? {};
    const misbehave = labels[MISBEHAVE_LABEL];
    if (misbehave === 'throw') throw new Error('cannot reconcile this object');
    if (misbehave === 'invalid-reply') return { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [{ op: 'explode' }] } as unknown as ReconcileResponse;
    if (misbehave === 'promise') return Promise.resolve(respond([])) as unknown as ReconcileResponse;
    const patch = patchAction(request.object, (draft) => {
      draft.metadata = { ...draft.metadata, labels: { ...labels, 'example.kubeloop.dev/seen': 'true' } };
    });
    return respond([patch, patch ? event('Normal', 'Labelled', `labelled ${request.object.metadata?.name ?? ''}`) : undefined]);
  },
});

export function podRequest(overrides: { labels?: Record<string, string>; reconcileId?: string } = {}): ReconcileRequest {
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', namespace: 'shop', uid: 'uid-1', resourceVersion: '42', labels: { app: 'web', ...overrides.labels } },
    spec: { containers: [{ name: 'web', image: 'nginx' }] },
  };
  return {
    apiVersion: 'kubeloop.dev/v1',
    kind: 'ReconcileRequest',
    loop: 'example',
    ...(overrides.reconcileId ? { reconcileId: overrides.reconcileId } : {}),
    trigger: { type: 'ADDED' },
    object: pod,
    children: {},
    now: '2026-11-22T10:00:00Z',
  };
}

export const expectedLabelPatch = [
  { op: 'test', path: '/metadata/resourceVersion', value: '42' },
  { op: 'add', path: `/metadata/labels/${pointerEscape('example.kubeloop.dev/seen')}`, value: 'true' },
];
