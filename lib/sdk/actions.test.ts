import { describe, expect, it } from 'vitest';
import fastJsonPatch from 'fast-json-patch';
import { patchOf, statusAction, remove, respond, pointerEscape } from './actions.ts';
import { validateReconcileResponse } from '../contract/validate.ts';
import type { KubeObject } from '../contract/types.ts';

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'default', uid: 'u1', resourceVersion: '42', labels: { app: 'web' } },
};

describe('patchOf', () => {
  it('leads with a resourceVersion test and turns the object into its mutated copy', () => {
    const ops = patchOf(pod, (p) => {
      p.metadata!.labels!['kubeloop.dev/pod-name'] = 'web-1';
    });
    expect(ops[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '42' });
    const patched = fastJsonPatch.applyPatch(fastJsonPatch.deepClone(pod) as KubeObject, ops).newDocument;
    expect(patched.metadata?.labels).toEqual({ app: 'web', 'kubeloop.dev/pod-name': 'web-1' });
  });

  it('returns no operations when nothing changes', () => {
    expect(patchOf(pod, () => undefined)).toEqual([]);
  });

  it('fails to apply against a newer resourceVersion', () => {
    const ops = patchOf(pod, (p) => {
      p.metadata!.labels = {};
    });
    const newer: KubeObject = { ...pod, metadata: { ...pod.metadata, resourceVersion: '43' } };
    expect(() => fastJsonPatch.applyPatch(fastJsonPatch.deepClone(newer), ops, true)).toThrow();
  });
});

describe('statusAction', () => {
  it('skips a status equal to the current one, whatever the key order and observedGeneration', () => {
    const podset = { ...pod, status: { observedGeneration: 3, podNames: ['a'], availableReplicas: 1 } };
    expect(statusAction(podset, { availableReplicas: 1, podNames: ['a'] })).toBeUndefined();
    expect(statusAction(podset, { availableReplicas: 2, podNames: ['a', 'b'] })).toEqual({
      op: 'status',
      status: { availableReplicas: 2, podNames: ['a', 'b'] },
    });
  });
});

describe('statusAction and observedGeneration', () => {
  it('writes an unchanged status when its observedGeneration lags the spec, so the router can bring it up', () => {
    const edited = { ...pod, metadata: { ...pod.metadata, generation: 4 }, status: { observedGeneration: 3, configMapName: 'x' } };
    expect(statusAction(edited, { configMapName: 'x' })).toEqual({ op: 'status', status: { configMapName: 'x' } });
    const caughtUp = { ...edited, status: { observedGeneration: 4, configMapName: 'x' } };
    expect(statusAction(caughtUp, { configMapName: 'x' })).toBeUndefined();
  });
});

describe('respond', () => {
  it('builds a response the contract schema accepts, with uid and resourceVersion preconditions on deletes', () => {
    const response = respond([undefined, remove(pod)], { requeueAfterSeconds: 5 });
    expect(validateReconcileResponse(response)).toEqual({ ok: true, value: response });
    expect(response.actions).toEqual([
      {
        op: 'delete',
        target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-1' },
        preconditions: { uid: 'u1', resourceVersion: '42' },
      },
    ]);
  });

  it('rejects an action with an unknown op, naming where', () => {
    const result = validateReconcileResponse({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [{ op: 'explode' }] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.join('\n')).toMatch(/\/actions\/0/);
  });
});

describe('pointerEscape', () => {
  it('escapes / and ~ in label keys', () => {
    expect(pointerEscape('kubeloop.dev/pod-name')).toBe('kubeloop.dev~1pod-name');
    expect(pointerEscape('a~b')).toBe('a~0b');
  });
});
