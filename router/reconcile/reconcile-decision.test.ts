import { describe, expect, it } from 'vitest';
import type { KubeObject, ReconcileResponse } from '../../lib/contract/types.ts';
import type { ApplyOutcome } from '../apply/apply-actions.ts';
import { decide, finalizerPhase, reconcileResult, writesFor } from './reconcile-decision.ts';

const done: ApplyOutcome = { result: 'done', refused: 0 };
const reply = (extra: Partial<ReconcileResponse> = {}): ReconcileResponse => ({ apiVersion: 'kubeloop.dev/v1alpha1', actions: [], ...extra }) as ReconcileResponse;
const applied = (response: ReconcileResponse, outcome: ApplyOutcome = done, deleted = false) =>
  decide({ stage: 'applied', response, applied: outcome, deleted, callMs: 12.4 });

describe('decide after a reply', () => {
  it('forgets the key after a clean reply and reports the Loop running', () => {
    const d = applied(reply());
    expect(d).toMatchObject({ step: { kind: 'forget' }, outcome: 'ok', health: { ready: true, reason: 'Running', message: 'last call answered in 12 ms' } });
    expect(d.warning).toBeUndefined();
  });

  it('forgets the key and calls again after requeueAfterSeconds', () => {
    expect(applied(reply({ requeueAfterSeconds: 30 })).step).toEqual({ kind: 'forget-and-requeue-after', delayMs: 30_000 });
  });

  it('backs off without a call while the cache has not caught up with the write a kept answer conflicted with', () => {
    expect(decide({ stage: 'replay-pending' })).toMatchObject({ step: { kind: 'backoff' } });
    expect(decide({ stage: 'replay-pending' }).warning).toBeUndefined();
  });

  it('backs a conflict off (short exponential backoff) instead of requeueing at once, with no event', () => {
    const d = applied(reply({ requeueAfterSeconds: 30 }), { result: 'conflict', message: 'stale' });
    expect(d).toMatchObject({ step: { kind: 'backoff' }, outcome: 'conflict' });
    expect(d.warning).toBeUndefined();
  });

  it('backs off a retryable action error with an ActionFailed event', () => {
    const d = applied(reply(), { result: 'failed', message: 'action 0 (create): 503', retryable: true });
    expect(d).toMatchObject({ step: { kind: 'backoff' }, outcome: 'action-error', warning: { reason: 'ActionFailed', message: 'action 0 (create): 503' } });
  });

  it('forgets a key whose action error retrying cannot fix, and still records ActionFailed', () => {
    const d = applied(reply(), { result: 'failed', message: 'action 0 (create): 422 invalid', retryable: false });
    expect(d).toMatchObject({ step: { kind: 'forget' }, outcome: 'action-error', warning: { reason: 'ActionFailed' } });
  });

  it('retries a temporary function error after its retryAfterSeconds', () => {
    const d = applied(reply({ error: { type: 'temporary', message: 'db down', retryAfterSeconds: 7 } }));
    expect(d).toMatchObject({ step: { kind: 'requeue-after', delayMs: 7000 }, outcome: 'function-error', warning: { reason: 'ReconcileError', message: 'db down' } });
  });

  it('backs off a temporary function error without retryAfterSeconds', () => {
    expect(applied(reply({ error: { type: 'temporary', message: 'db down' } })).step).toEqual({ kind: 'backoff' });
  });

  it('forgets a permanent function error, even with retryAfterSeconds: only a change brings the key back', () => {
    const d = applied(reply({ error: { type: 'permanent', message: 'bad spec', retryAfterSeconds: 7 } }));
    expect(d).toMatchObject({ step: { kind: 'forget' }, outcome: 'function-error', warning: { reason: 'ReconcileError', message: 'bad spec' } });
  });

  it('drops the tombstone of a deleted primary and ignores its requeueAfterSeconds', () => {
    const d = applied(reply({ requeueAfterSeconds: 30 }), done, true);
    expect(d).toMatchObject({ step: { kind: 'forget' }, outcome: 'ok', dropTombstone: true });
  });

  it('keeps the tombstone of a deleted primary whose writes conflicted, so the deletion is sent again', () => {
    const d = applied(reply(), { result: 'conflict', message: 'stale' }, true);
    expect(d.dropTombstone).toBeUndefined();
    expect(d.step).toEqual({ kind: 'backoff' });
  });

  it('drops the tombstone of a deleted primary even when the function reports an error', () => {
    expect(applied(reply({ error: { type: 'temporary', message: 'x' } }), done, true).dropTombstone).toBe(true);
  });
});

describe('decide after a failed call', () => {
  it('waits out the Retry-After of a throttled call, with no event and the Loop left as it is', () => {
    const d = decide({ stage: 'call-failed', call: { kind: 'throttled', status: 429, retryAfterMs: 2000, message: '' } });
    expect(d).toMatchObject({ step: { kind: 'requeue-after', delayMs: 2000 }, outcome: 'throttled' });
    expect(d.warning).toBeUndefined();
    expect(d.health).toBeUndefined();
  });

  it('backs a throttled call without Retry-After off', () => {
    expect(decide({ stage: 'call-failed', call: { kind: 'throttled', status: 429, retryAfterMs: undefined, message: '' } }).step).toEqual({ kind: 'backoff' });
  });

  it('forgets a rejected request (4xx): resending it unchanged would fail the same way', () => {
    const d = decide({ stage: 'call-failed', call: { kind: 'rejected', status: 400, message: 'HTTP 400: no' } });
    expect(d).toMatchObject({
      step: { kind: 'forget' },
      outcome: 'rejected',
      warning: { reason: 'FunctionRejected', message: 'HTTP 400: no' },
      health: { ready: false, reason: 'FunctionRejected' },
    });
  });

  it.each(['Unreachable', 'Timeout', 'ServerError'] as const)('backs off a function that is %s and reports FunctionUnreachable', (reason) => {
    const d = decide({ stage: 'call-failed', call: { kind: 'failed', status: undefined, reason, message: 'refused' } });
    expect(d).toMatchObject({ step: { kind: 'backoff' }, outcome: 'error', warning: { reason: 'FunctionUnreachable' }, health: { ready: false, reason: 'FunctionUnreachable' } });
    expect(d.log?.level).toBe('sampled');
  });

  it('backs off a reply that is not a ReconcileResponse and reports InvalidResponse', () => {
    const d = decide({ stage: 'call-failed', call: { kind: 'failed', status: 200, reason: 'InvalidResponse', message: 'not JSON' } });
    expect(d).toMatchObject({ step: { kind: 'backoff' }, outcome: 'error', health: { ready: false, reason: 'InvalidResponse' } });
  });
});

describe('decide with the requeue floor', () => {
  it('never waits less than the floor for a delay the function or its server asked for', () => {
    const policy = { minRequeueMs: 1000 };
    expect(decide({ stage: 'applied', response: reply({ requeueAfterSeconds: 0 }), applied: done, deleted: false, callMs: 1 }, policy).step).toEqual({ kind: 'forget-and-requeue-after', delayMs: 1000 });
    expect(decide({ stage: 'applied', response: reply({ error: { type: 'temporary', message: 'x', retryAfterSeconds: 0 } }), applied: done, deleted: false, callMs: 1 }, policy).step).toEqual({ kind: 'requeue-after', delayMs: 1000 });
    expect(decide({ stage: 'call-failed', call: { kind: 'throttled', status: 429, retryAfterMs: 0, message: '' } }, policy).step).toEqual({ kind: 'requeue-after', delayMs: 1000 });
  });

  it('does not floor the expectations timer, which the router sets itself', () => {
    expect(decide({ stage: 'expectations-pending', remainingMs: 0 }, { minRequeueMs: 1000 }).step).toEqual({ kind: 'requeue-after', delayMs: 10 });
  });
});

describe('decide before a call', () => {
  it('forgets the key when the primary is exactly what our own last write produced', () => {
    expect(decide({ stage: 'own-write-seen' })).toEqual({ step: { kind: 'forget' } });
  });

  it('requeues an owner whose expectations are pending just after they expire', () => {
    expect(decide({ stage: 'expectations-pending', remainingMs: 500 }).step).toEqual({ kind: 'requeue-after', delayMs: 510 });
  });

  it('waits for the watch event of an added finalizer, and backs off when adding it failed', () => {
    expect(decide({ stage: 'finalizer-added', applied: done }).step).toEqual({ kind: 'wait' });
    expect(decide({ stage: 'finalizer-added', applied: { result: 'conflict', message: 'stale' } }).step).toEqual({ kind: 'backoff' });
    const failed = decide({ stage: 'finalizer-added', applied: { result: 'failed', message: 'forbidden', retryable: false } });
    expect(failed).toMatchObject({ step: { kind: 'backoff' }, log: { level: 'warn', message: 'could not add finalizer' } });
    expect(failed.outcome).toBeUndefined();
  });
});

const FINALIZER = 'kubeloop.dev/loop-a';
const loop = { finalize: true, finalizer: FINALIZER, sendDeletes: false };
const object = (metadata: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n', resourceVersion: '5', ...metadata } });

describe('finalizerPhase', () => {
  it('adds the finalizer (tested against the resourceVersion) before the first call', () => {
    const phase = finalizerPhase(loop, object({}), false);
    expect(phase).toEqual({
      kind: 'add-finalizer',
      patch: [
        { op: 'test', path: '/metadata/resourceVersion', value: '5' },
        { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
      ],
    });
  });

  it('calls a held primary, finalizing once it is being deleted', () => {
    expect(finalizerPhase(loop, object({ finalizers: [FINALIZER] }), false)).toEqual({ kind: 'call', finalizing: false });
    expect(finalizerPhase(loop, object({ finalizers: [FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' }), false)).toEqual({ kind: 'call', finalizing: true });
  });

  it('leaves a deleting primary alone once the finalizer is gone', () => {
    expect(finalizerPhase(loop, object({ finalizers: ['other'], deletionTimestamp: '2026-01-01T00:00:00Z' }), false)).toEqual({ kind: 'skip' });
  });

  it('without finalize, calls about a deleting primary only when the Loop sends deletes', () => {
    const deleting = object({ deletionTimestamp: '2026-01-01T00:00:00Z' });
    expect(finalizerPhase({ ...loop, finalize: false }, deleting, false)).toEqual({ kind: 'skip' });
    expect(finalizerPhase({ ...loop, finalize: false, sendDeletes: true }, deleting, false)).toEqual({ kind: 'call', finalizing: false });
    expect(finalizerPhase(loop, object({}), true)).toEqual({ kind: 'call', finalizing: false });
  });
});

describe('writesFor', () => {
  const status = { op: 'status', status: { ready: true } } as const;
  const event = { op: 'event', type: 'Normal', reason: 'R', message: 'm' } as const;

  it('removes the finalizer after the other actions once the function says finalized', () => {
    const primary = object({ finalizers: ['other', FINALIZER], deletionTimestamp: '2026-01-01T00:00:00Z' });
    const writes = writesFor(reply({ actions: [event], finalized: true }), { primary, finalizer: FINALIZER, deleted: false, finalizing: true });
    expect(writes).toEqual([
      event,
      { op: 'finalizer', patch: [{ op: 'test', path: '/metadata/finalizers/1', value: FINALIZER }, { op: 'remove', path: '/metadata/finalizers/1' }] },
    ]);
  });

  it('keeps the finalizer while the function has not finalized, or when the primary is not being finalized', () => {
    const primary = object({ finalizers: [FINALIZER] });
    expect(writesFor(reply({ actions: [event] }), { primary, finalizer: FINALIZER, deleted: false, finalizing: true })).toEqual([event]);
    expect(writesFor(reply({ actions: [event], finalized: true }), { primary, finalizer: FINALIZER, deleted: false, finalizing: false })).toEqual([event]);
  });

  it('writes no status to a primary that is already gone', () => {
    expect(writesFor(reply({ actions: [status, event] }), { primary: object({}), finalizer: FINALIZER, deleted: true, finalizing: false })).toEqual([event]);
  });
});

describe('reconcileResult', () => {
  it('labels queue steps as controller-runtime labels reconcile results', () => {
    expect(reconcileResult({ kind: 'backoff' })).toBe('error');
    expect(reconcileResult({ kind: 'requeue-after', delayMs: 5 })).toBe('requeue_after');
    expect(reconcileResult({ kind: 'forget-and-requeue-after', delayMs: 5 })).toBe('requeue_after');
    expect(reconcileResult({ kind: 'forget' })).toBe('success');
    expect(reconcileResult({ kind: 'wait' })).toBe('success');
  });
});
