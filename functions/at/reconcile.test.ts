import { describe, expect, it } from 'vitest';
import { validateReconcileResponse } from '../../lib/contract/validate.ts';
import type { Action, KubeObject, ReconcileResponse } from '../../lib/sdk/index.ts';
import { kubeObject, requestFor, variant } from '../../test/support/reconcile-request.ts';
import type { At, AtStatus } from '../../api/at.ts';
import { AT_DEFAULTS, readAtConfig } from './config.ts';
import { reconcileAt } from './reconcile.ts';

const NOW = '2026-11-22T10:00:00Z';

const at = kubeObject<At>({
  apiVersion: 'cnat.kubeloop.dev/v1alpha1',
  kind: 'At',
  metadata: {
    name: 'at-sample',
    namespace: 'cnat',
    uid: 'at-uid-0001',
    resourceVersion: '500',
    generation: 1,
    creationTimestamp: '2026-11-22T09:59:00Z',
  },
  spec: { schedule: '2026-11-22T10:00:30Z', command: 'echo "hello world!"' },
});

const ownerRef = {
  apiVersion: 'cnat.kubeloop.dev/v1alpha1',
  kind: 'At',
  name: 'at-sample',
  uid: 'at-uid-0001',
  controller: true,
  blockOwnerDeletion: true,
};

function pod(phase: string, extra: Record<string, unknown> = {}): KubeObject {
  return kubeObject({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'at-sample',
      namespace: 'cnat',
      uid: 'pod-uid',
      resourceVersion: '510',
      creationTimestamp: '2026-11-22T10:00:31Z',
      ownerReferences: [ownerRef],
    },
    spec: { containers: [{ name: 'busybox', image: 'busybox:1.36' }], restartPolicy: 'OnFailure' },
    status: { phase, ...extra },
  });
}

/** The At with this status, as the router leaves it: observedGeneration caught up with generation 1. */
function withStatus(object: At, status: AtStatus): At {
  return variant(object, (a) => (a.status = { ...status, observedGeneration: 1 }));
}

const done = (status: 'True' | 'False', reason: string, message: string, lastTransitionTime = NOW) => ({
  type: 'Done',
  status,
  reason,
  message,
  lastTransitionTime,
  observedGeneration: 1,
});

function reconcile(object: At, pods: KubeObject[] | undefined, now = NOW, config = AT_DEFAULTS): ReconcileResponse {
  const children: Record<string, KubeObject[]> = pods === undefined ? {} : { 'Pod.v1': pods };
  const response = reconcileAt(requestFor(object, { children, now, loop: 'at' }), config);
  const valid = validateReconcileResponse(response);
  expect(valid.ok ? [] : valid.errors).toEqual([]);
  return response;
}

const ops = (response: ReconcileResponse) => response.actions.map((a: Action) => a.op);

describe('at reconcile: PENDING', () => {
  it('waits for the schedule: records PENDING and asks to be called again when it is due', () => {
    const response = reconcile(at, []);
    expect(response.actions).toEqual([
      { op: 'status', status: { phase: 'PENDING', conditions: [done('False', 'Scheduled', 'runs at 2026-11-22T10:00:30Z')] } },
    ]);
    expect(response.requeueAfterSeconds).toBe(30);
  });

  it('rounds the wait up to whole seconds so it never wakes early', () => {
    expect(reconcile(at, [], '2026-11-22T10:00:28.400Z').requeueAfterSeconds).toBe(2);
    expect(reconcile(at, [], '2026-11-22T10:00:29.999Z').requeueAfterSeconds).toBe(1);
  });

  it('writes nothing on a replay while pending, but still requeues', () => {
    const waiting = withStatus(at, { phase: 'PENDING', conditions: [done('False', 'Scheduled', 'runs at 2026-11-22T10:00:30Z', '2026-11-22T09:59:00Z')] });
    const response = reconcile(waiting, [], '2026-11-22T10:00:10Z');
    expect(response.actions).toEqual([]);
    expect(response.requeueAfterSeconds).toBe(20);
  });

  it('refuses an unparseable schedule for good: PENDING, a condition and a Warning event saying why', () => {
    const bad = variant(at, (a) => (a.spec!.schedule = '16/11/2020 10:12'));
    const message = 'spec.schedule "16/11/2020 10:12" is not an RFC 3339 UTC time such as 2020-11-16T10:12:00Z';
    const response = reconcile(bad, []);
    expect(response.actions).toEqual([
      { op: 'event', type: 'Warning', reason: 'InvalidSchedule', message },
      { op: 'status', status: { phase: 'PENDING', conditions: [done('False', 'InvalidSchedule', message)] } },
    ]);
    expect(response.error).toEqual({ type: 'permanent', message });
    expect(response.requeueAfterSeconds).toBeUndefined();
  });

  it('does not repeat the Warning event once the condition already says why', () => {
    const message = 'spec.schedule "tomorrow" is not an RFC 3339 UTC time such as 2020-11-16T10:12:00Z';
    const bad = withStatus(
      variant(at, (a) => (a.spec!.schedule = 'tomorrow')),
      { phase: 'PENDING', conditions: [done('False', 'InvalidSchedule', message, '2026-11-22T09:59:00Z')] },
    );
    const response = reconcile(bad, []);
    expect(response.actions).toEqual([]);
    expect(response.error?.type).toBe('permanent');
  });

  it('refuses a schedule with an offset other than Z', () => {
    const offset = variant(at, (a) => (a.spec!.schedule = '2026-11-22T11:00:30+01:00'));
    expect(reconcile(offset, []).error?.type).toBe('permanent');
  });
});

describe('at reconcile: RUNNING', () => {
  it('creates the pod at the scheduled second and records RUNNING with a Started event', () => {
    const response = reconcile(at, [], '2026-11-22T10:00:30Z');
    expect(response.actions).toEqual([
      {
        op: 'create',
        object: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'at-sample', namespace: 'cnat', labels: { app: 'at-sample' }, ownerReferences: [ownerRef] },
          spec: {
            containers: [
              {
                name: 'busybox',
                image: 'busybox:1.36',
                command: ['sh', '-c', 'echo "hello world!"'],
                securityContext: {
                  allowPrivilegeEscalation: false,
                  capabilities: { drop: ['ALL'] },
                  runAsNonRoot: true,
                  runAsUser: 65534,
                  seccompProfile: { type: 'RuntimeDefault' },
                },
              },
            ],
            restartPolicy: 'OnFailure',
          },
        },
      },
      { op: 'event', type: 'Normal', reason: 'Started', message: 'schedule 2026-11-22T10:00:30Z reached: creating pod at-sample' },
      {
        op: 'status',
        status: {
          phase: 'RUNNING',
          startedAt: '2026-11-22T10:00:30Z',
          conditions: [done('False', 'Running', 'pod at-sample is running the command', '2026-11-22T10:00:30Z')],
        },
      },
    ]);
    expect(response.requeueAfterSeconds).toBeUndefined();
  });

  it('runs an At whose schedule is in the past at once', () => {
    const past = variant(at, (a) => (a.spec!.schedule = '2020-11-16T10:12:00Z'));
    expect(ops(reconcile(past, []))).toEqual(['create', 'event', 'status']);
  });

  it('uses spec.image, else the configured image', () => {
    const imageOf = (r: ReconcileResponse) =>
      ((r.actions[0] as unknown as { object: { spec: { containers: Array<{ image: string }> } } }).object.spec.containers[0]?.image);
    const due = variant(at, (a) => (a.spec!.schedule = '2020-11-16T10:12:00Z'));
    expect(imageOf(reconcile(variant(due, (a) => (a.spec!.image = 'alpine:3.20')), []))).toBe('alpine:3.20');
    expect(imageOf(reconcile(due, [], NOW, readAtConfig({ KUBELOOP_AT_IMAGE: 'registry.local/busybox:1.36' })))).toBe('registry.local/busybox:1.36');
  });

  it('creates the same pod again when RUNNING is recorded but no pod is seen (a replay: AlreadyExists is a no-op)', () => {
    const running = withStatus(at, {
      phase: 'RUNNING',
      startedAt: '2026-11-22T10:00:30Z',
      conditions: [done('False', 'Running', 'pod at-sample is running the command', '2026-11-22T10:00:30Z')],
    });
    const response = reconcile(running, [], '2026-11-22T10:00:31Z');
    expect(ops(response)).toEqual(['create']);
    expect((response.actions[0] as { object: KubeObject }).object.metadata?.name).toBe('at-sample');
  });

  it('does nothing while the pod runs and the status says RUNNING', () => {
    const running = withStatus(at, {
      phase: 'RUNNING',
      startedAt: '2026-11-22T10:00:30Z',
      conditions: [done('False', 'Running', 'pod at-sample is running the command', '2026-11-22T10:00:30Z')],
    });
    expect(reconcile(running, [pod('Running')]).actions).toEqual([]);
  });

  it('records RUNNING from the pod when the earlier status write was lost, dating it by the pod', () => {
    const response = reconcile(withStatus(at, { phase: 'PENDING' }), [pod('Pending')], '2026-11-22T10:00:33Z');
    expect(response.actions).toEqual([
      {
        op: 'status',
        status: {
          phase: 'RUNNING',
          startedAt: '2026-11-22T10:00:31Z',
          conditions: [done('False', 'Running', 'pod at-sample is running the command', '2026-11-22T10:00:33Z')],
        },
      },
    ]);
  });

  it('follows an existing pod even when the schedule has become unparseable', () => {
    const edited = variant(at, (a) => (a.spec!.schedule = 'never'));
    const response = reconcile(edited, [pod('Running')]);
    expect(response.error).toBeUndefined();
    expect(ops(response)).toEqual(['status']);
  });

  it('does not take a pod of the same name that it does not control for its own', () => {
    const foreign = variant(pod('Succeeded'), (p) => (p.metadata!.ownerReferences = []));
    const due = variant(at, (a) => (a.spec!.schedule = '2020-11-16T10:12:00Z'));
    expect(ops(reconcile(due, [foreign]))).toEqual(['create', 'event', 'status']);
  });
});

describe('at reconcile: DONE', () => {
  const running = withStatus(at, {
    phase: 'RUNNING',
    startedAt: '2026-11-22T10:00:30Z',
    conditions: [done('False', 'Running', 'pod at-sample is running the command', '2026-11-22T10:00:30Z')],
  });

  it('records DONE with outcome Succeeded and the container end time', () => {
    const finished = pod('Succeeded', {
      containerStatuses: [{ name: 'busybox', state: { terminated: { exitCode: 0, finishedAt: '2026-11-22T10:00:34Z' } } }],
    });
    const response = reconcile(running, [finished], '2026-11-22T10:00:35Z');
    expect(response.actions).toEqual([
      { op: 'event', type: 'Normal', reason: 'Succeeded', message: 'pod at-sample succeeded' },
      {
        op: 'status',
        status: {
          phase: 'DONE',
          outcome: 'Succeeded',
          startedAt: '2026-11-22T10:00:30Z',
          finishedAt: '2026-11-22T10:00:34Z',
          conditions: [done('True', 'Succeeded', 'pod at-sample succeeded', '2026-11-22T10:00:35Z')],
        },
      },
    ]);
  });

  it('records DONE with outcome Failed, a Warning event, and now as end time when the kubelet gave none', () => {
    const response = reconcile(running, [pod('Failed')], '2026-11-22T10:00:35Z');
    expect(response.actions[0]).toEqual({ op: 'event', type: 'Warning', reason: 'Failed', message: 'pod at-sample failed' });
    expect(response.actions[1]).toMatchObject({ op: 'status', status: { phase: 'DONE', outcome: 'Failed', finishedAt: '2026-11-22T10:00:35Z' } });
  });

  it('goes straight from PENDING to DONE when the first request it sees already has a finished pod', () => {
    const response = reconcile(withStatus(at, { phase: 'PENDING' }), [pod('Succeeded')], '2026-11-22T10:05:00Z');
    expect(response.actions[1]).toMatchObject({ status: { phase: 'DONE', outcome: 'Succeeded', startedAt: '2026-11-22T10:00:31Z' } });
  });

  it('does nothing once DONE, even if the pod is gone or the At is edited', () => {
    const finished = withStatus(variant(at, (a) => (a.spec!.schedule = '2030-01-01T00:00:00Z')), {
      phase: 'DONE',
      outcome: 'Succeeded',
      startedAt: '2026-11-22T10:00:30Z',
      finishedAt: '2026-11-22T10:00:34Z',
    });
    expect(reconcile(finished, [])).toEqual({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] });
  });

  it('only writes the same DONE status back when an edit left observedGeneration behind', () => {
    const status: AtStatus = { phase: 'DONE', outcome: 'Failed', startedAt: '2026-11-22T10:00:30Z', finishedAt: '2026-11-22T10:00:34Z' };
    const edited = variant(withStatus(at, status), (a) => (a.metadata!.generation = 2));
    expect(reconcile(edited, []).actions).toEqual([{ op: 'status', status }]);
  });
});

describe('at reconcile: guards', () => {
  it('does nothing for an At that is being deleted', () => {
    const deleting = variant(at, (a) => (a.metadata!.deletionTimestamp = new Date(NOW)));
    expect(reconcile(deleting, []).actions).toEqual([]);
  });

  it('refuses to act without the Pod.v1 children', () => {
    expect(reconcile(at, undefined).error).toEqual({
      type: 'permanent',
      message: 'the request has no children["Pod.v1"]: the At Loop must own v1 Pods',
    });
  });
});
