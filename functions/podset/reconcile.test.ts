import { describe, expect, it } from 'vitest';
import { validateReconcileResponse } from '../../lib/contract/validate.ts';
import type { Action, CreateAction, DeleteAction, KubeObject, ReconcileResponse } from '../../lib/sdk/index.ts';
import { kubeObject, requestFor, variant } from '../../test/support/reconcile-request.ts';
import { PODSET_DEFAULTS, readPodSetConfig } from './config.ts';
import type { PodSet } from '../../api/podset.ts';
import { isAvailable, nameList, reconcilePodSet, scaleDownOrder } from './reconcile.ts';

const NOW = '2026-11-22T10:00:00Z';

const podset = kubeObject<PodSet>({
  apiVersion: 'app.kubeloop.dev/v1alpha1',
  kind: 'PodSet',
  metadata: {
    name: 'podset-sample',
    namespace: 'default',
    uid: 'a1b2c3d4-0000-4000-8000-000000000001',
    resourceVersion: '700',
    generation: 2,
    creationTimestamp: '2026-11-22T09:00:00Z',
  },
  spec: { replicas: 3 },
});

const ownerRef = {
  apiVersion: 'app.kubeloop.dev/v1alpha1',
  kind: 'PodSet',
  name: 'podset-sample',
  uid: 'a1b2c3d4-0000-4000-8000-000000000001',
  controller: true,
  blockOwnerDeletion: true,
};

function pod(name: string, phase: string, created: string, extra: Record<string, unknown> = {}): KubeObject {
  return kubeObject({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      generateName: 'podset-sample-pod-',
      namespace: 'default',
      uid: `uid-${name}`,
      resourceVersion: '800',
      creationTimestamp: created,
      labels: { app: 'podset-sample', version: 'v0.1' },
      ownerReferences: [ownerRef],
      ...extra,
    },
    spec: { containers: [{ name: 'fancy-alpine', image: 'busybox:1.36' }] },
    status: { phase },
  });
}

function reconcile(object: PodSet, pods: KubeObject[] | undefined, config = PODSET_DEFAULTS): ReconcileResponse {
  const children: Record<string, KubeObject[]> = pods === undefined ? {} : { 'Pod.v1': pods };
  const response = reconcilePodSet(requestFor(object, { children, now: NOW, loop: 'podset' }), config);
  const valid = validateReconcileResponse(response);
  expect(valid.ok ? [] : valid.errors).toEqual([]);
  return response;
}

const ofOp = <T extends Action['op']>(response: ReconcileResponse, op: T) =>
  response.actions.filter((a): a is Extract<Action, { op: T }> => a.op === op);

function withStatus(object: PodSet, names: string[], ready: 'True' | 'False', reason: string, replicas = 3): PodSet {
  return variant(object, (p) => {
    p.status = {
      podNames: names,
      availableReplicas: names.length,
      observedGeneration: 2,
      conditions: [
        {
          type: 'Ready',
          status: ready,
          reason,
          message: `${names.length} available, ${replicas} desired`,
          lastTransitionTime: '2026-11-22T09:30:00Z',
          observedGeneration: 2,
        },
      ],
    };
  });
}

describe('podset reconcile', () => {
  it('creates every missing pod in one reconcile, owned and labelled as in the seed', () => {
    const response = reconcile(podset, []);
    const creates = ofOp(response, 'create');
    expect(creates).toHaveLength(3);
    for (const { object } of creates as CreateAction[]) {
      expect(object).toEqual({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          generateName: 'podset-sample-pod-',
          namespace: 'default',
          labels: { app: 'podset-sample', version: 'v0.1' },
          ownerReferences: [ownerRef],
        },
        spec: {
          containers: [
            {
              name: 'fancy-alpine',
              image: 'busybox:1.36',
              command: ['sleep', '3600'],
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                runAsNonRoot: true,
                runAsUser: 65534,
                seccompProfile: { type: 'RuntimeDefault' },
              },
            },
          ],
        },
      });
    }
    expect(ofOp(response, 'status')).toEqual([
      {
        op: 'status',
        status: {
          podNames: [],
          availableReplicas: 0,
          conditions: [
            { type: 'Ready', status: 'False', reason: 'ScalingUp', message: '0 available, 3 desired', lastTransitionTime: NOW, observedGeneration: 2 },
          ],
        },
      },
    ]);
  });

  it('creates only the pods that are missing', () => {
    const response = reconcile(podset, [pod('podset-sample-pod-aaaaa', 'Running', '2026-11-22T09:10:00Z')]);
    expect(ofOp(response, 'create')).toHaveLength(2);
    expect(ofOp(response, 'event')).toEqual([
      { op: 'event', type: 'Normal', reason: 'ScalingUp', message: 'creating 2 pod(s): 1 available, 3 desired' },
    ]);
  });

  it('does nothing at all when the pods and the status are already right', () => {
    const names = ['podset-sample-pod-aaaaa', 'podset-sample-pod-bbbbb', 'podset-sample-pod-ccccc'];
    const steady = withStatus(podset, names, 'True', 'AllPodsAvailable');
    const pods = names.map((n) => pod(n, 'Running', '2026-11-22T09:10:00Z'));
    expect(reconcile(steady, pods).actions).toEqual([]);
  });

  it('only writes status when the pods are right but the status is stale', () => {
    const names = ['podset-sample-pod-aaaaa', 'podset-sample-pod-bbbbb', 'podset-sample-pod-ccccc'];
    const stale = withStatus(podset, names.slice(0, 2), 'False', 'ScalingUp');
    const response = reconcile(stale, names.map((n) => pod(n, 'Pending', '2026-11-22T09:10:00Z')));
    expect(response.actions.map((a) => a.op)).toEqual(['status']);
    expect(ofOp(response, 'status')[0]?.status).toEqual({
      podNames: names,
      availableReplicas: 3,
      conditions: [
        { type: 'Ready', status: 'True', reason: 'AllPodsAvailable', message: '3 available, 3 desired', lastTransitionTime: NOW, observedGeneration: 2 },
      ],
    });
  });

  it('keeps the Ready transition time while the condition stays False', () => {
    const scaling = withStatus(podset, ['podset-sample-pod-aaaaa'], 'False', 'ScalingUp');
    const response = reconcile(scaling, [
      pod('podset-sample-pod-aaaaa', 'Running', '2026-11-22T09:10:00Z'),
      pod('podset-sample-pod-bbbbb', 'Pending', '2026-11-22T09:59:00Z'),
    ]);
    const condition = (ofOp(response, 'status')[0]?.status.conditions as Array<{ lastTransitionTime: string }>)[0];
    expect(condition?.lastTransitionTime).toBe('2026-11-22T09:30:00Z');
  });

  it('scales 5 -> 1 by deleting Pending pods first, then the newest Running ones, guarded by uid', () => {
    const pods = [
      pod('podset-sample-pod-old01', 'Running', '2026-11-22T09:00:00Z'),
      pod('podset-sample-pod-new01', 'Running', '2026-11-22T09:50:00Z'),
      pod('podset-sample-pod-mid01', 'Running', '2026-11-22T09:20:00Z'),
      pod('podset-sample-pod-pend1', 'Pending', '2026-11-22T09:05:00Z'),
      pod('podset-sample-pod-pend2', 'Pending', '2026-11-22T09:06:00Z'),
    ];
    const response = reconcile(variant(podset, (p) => (p.spec!.replicas = 1)), pods);
    const deletes = ofOp(response, 'delete') as DeleteAction[];
    expect(deletes.map((d) => d.target.name)).toEqual([
      'podset-sample-pod-pend2',
      'podset-sample-pod-pend1',
      'podset-sample-pod-new01',
      'podset-sample-pod-mid01',
    ]);
    expect(deletes[0]).toEqual({
      op: 'delete',
      target: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'podset-sample-pod-pend2' },
      preconditions: { uid: 'uid-podset-sample-pod-pend2' },
    });
    expect(ofOp(response, 'create')).toEqual([]);
    expect(ofOp(response, 'status')[0]?.status).toMatchObject({
      availableReplicas: 5,
      conditions: [{ type: 'Ready', status: 'False', reason: 'ScalingDown', message: '5 available, 1 desired' }],
    });
  });

  it('keeps the ScalingDown event within the 1,024 characters of the contract when many pods go', () => {
    const pods = Array.from({ length: 200 }, (_, i) => pod(`podset-sample-pod-${String(i).padStart(40, '0')}`, 'Running', '2026-11-22T09:00:00Z'));
    const response = reconcile(variant(podset, (p) => (p.spec!.replicas = 1)), pods);
    expect(ofOp(response, 'delete')).toHaveLength(199);
    const message = ofOp(response, 'event')[0]?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(1024);
    expect(message).toMatch(/^deleting 199 pod\(s\) \(podset-sample-pod-0+\d+, .*, and \d+ more\): 200 available, 1 desired$/);
  });

  it('lists names within a budget and says how many were left out', () => {
    expect(nameList(['a', 'b', 'c'], 100)).toBe('a, b, c');
    expect(nameList(['aaaa', 'bbbb', 'cccc'], 20)).toBe('aaaa, and 2 more');
    expect(nameList(['a-very-long-name'], 5)).toBe('1 pods');
  });

  it('does not count terminating, Succeeded or Failed pods, and replaces them', () => {
    const pods = [
      pod('podset-sample-pod-aaaaa', 'Running', '2026-11-22T09:10:00Z'),
      pod('podset-sample-pod-bbbbb', 'Running', '2026-11-22T09:10:00Z', { deletionTimestamp: '2026-11-22T09:59:00Z' }),
      pod('podset-sample-pod-ccccc', 'Succeeded', '2026-11-22T09:10:00Z'),
      pod('podset-sample-pod-ddddd', 'Failed', '2026-11-22T09:10:00Z'),
    ];
    const response = reconcile(podset, pods);
    expect(ofOp(response, 'create')).toHaveLength(2);
    expect(ofOp(response, 'delete')).toEqual([]);
    expect(ofOp(response, 'status')[0]?.status).toMatchObject({ podNames: ['podset-sample-pod-aaaaa'], availableReplicas: 1 });
  });

  it('ignores pods it does not control', () => {
    const foreign = pod('podset-sample-pod-zzzzz', 'Running', '2026-11-22T09:10:00Z', {
      ownerReferences: [{ ...ownerRef, uid: 'another-podset-with-the-same-name' }],
    });
    expect(ofOp(reconcile(podset, [foreign]), 'create')).toHaveLength(3);
  });

  it('uses spec.template, keeping its labels and annotations but always setting app and version', () => {
    const templated = variant(podset, (p) => {
      p.spec!.replicas = 1;
      p.spec!.template = {
        metadata: { labels: { tier: 'cache', app: 'not-mine' }, annotations: { 'kubeloop.dev/add-pod-name-label': 'true' } },
        spec: { containers: [{ name: 'redis', image: 'redis:7' }] },
      };
    });
    const [created] = ofOp(reconcile(templated, []), 'create') as CreateAction[];
    expect(created?.object.metadata).toMatchObject({
      labels: { tier: 'cache', app: 'podset-sample', version: 'v0.1' },
      annotations: { 'kubeloop.dev/add-pod-name-label': 'true' },
    });
    expect(created?.object.spec).toEqual({ containers: [{ name: 'redis', image: 'redis:7' }] });
  });

  it('uses the configured image for the default container', () => {
    const config = readPodSetConfig({ KUBELOOP_PODSET_IMAGE: 'registry.local/tools/busybox:1.36' });
    const [created] = ofOp(reconcile(podset, [], config), 'create') as CreateAction[];
    expect((created?.object.spec as { containers: Array<{ image: string }> }).containers[0]?.image).toBe('registry.local/tools/busybox:1.36');
  });

  it('treats a PodSet without spec.replicas as 1 replica, the CRD default', () => {
    expect(ofOp(reconcile(variant(podset, (p) => delete p.spec!.replicas), []), 'create')).toHaveLength(1);
  });

  it('does nothing for a PodSet that is being deleted', () => {
    const deleting = variant(podset, (p) => (p.metadata!.deletionTimestamp = new Date(NOW)));
    expect(reconcile(deleting, []).actions).toEqual([]);
  });

  it('refuses to act without the Pod.v1 children, which would create pods on every call', () => {
    const response = reconcile(podset, undefined);
    expect(response.actions).toEqual([]);
    expect(response.error).toEqual({
      type: 'permanent',
      message: 'the request has no children["Pod.v1"]: the PodSet Loop must own v1 Pods',
    });
  });

  it.each([0, 11, 2.5, '3'])('answers spec.replicas %j with a Warning event and a permanent error', (replicas) => {
    const bad = variant(podset, (p) => ((p.spec as Record<string, unknown>).replicas = replicas));
    const response = reconcile(bad, []);
    const message = `spec.replicas must be an integer from 1 to 10, got ${JSON.stringify(replicas)}`;
    expect(response.actions).toEqual([{ op: 'event', type: 'Warning', reason: 'InvalidReplicas', message }]);
    expect(response.error).toEqual({ type: 'permanent', message });
  });
});

describe('isAvailable and scaleDownOrder', () => {
  it('counts Pending, Running and phase-less pods that are not terminating', () => {
    expect(isAvailable(pod('a', 'Pending', NOW))).toBe(true);
    expect(isAvailable(pod('a', 'Running', NOW))).toBe(true);
    expect(isAvailable(variant(pod('a', 'Running', NOW), (p) => delete p.status))).toBe(true);
    expect(isAvailable(pod('a', 'Unknown', NOW))).toBe(false);
  });

  it('orders pods created in the same second by name, so replays delete the same ones', () => {
    const a = pod('podset-sample-pod-aaaaa', 'Running', NOW);
    const b = pod('podset-sample-pod-bbbbb', 'Running', NOW);
    expect([a, b].sort(scaleDownOrder).map((p) => p.metadata?.name)).toEqual(['podset-sample-pod-bbbbb', 'podset-sample-pod-aaaaa']);
    expect([b, a].sort(scaleDownOrder).map((p) => p.metadata?.name)).toEqual(['podset-sample-pod-bbbbb', 'podset-sample-pod-aaaaa']);
  });
});
