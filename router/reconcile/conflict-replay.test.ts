import { describe, expect, it } from 'vitest';
import type { Action, KubeObject, ReconcileResponse } from '../../lib/contract/types.ts';
import { ConflictReplays, judgeKeptAnswer, keepsAnswer, type KeptAnswer } from './conflict-replay.ts';

const sent: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'shop', name: 'web-1', resourceVersion: '10', labels: { app: 'web' }, managedFields: [{ manager: 'kubectl' }] },
};
const patchPod: Action = {
  op: 'patch',
  target: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1' },
  patch: [{ op: 'add', path: '/metadata/labels/pod-name', value: 'web-1' }],
};
const respond = (actions: Action[], extra: Partial<ReconcileResponse> = {}): ReconcileResponse => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions, ...extra });
const kept = (extra: Partial<KeptAnswer> = {}): KeptAnswer => ({ primary: sent, response: respond([patchPod]), callMs: 2, answeredAt: 1_000, staleRetries: 0, ...extra });
/** The sent pod after a write the function never sees (kwok's status, the scheduler's binding). */
const bookkept: KubeObject = { ...sent, metadata: { ...sent.metadata, resourceVersion: '11', managedFields: [{ manager: 'kwok' }] } };
const limits = { maxStaleRetries: 3, maxAgeMs: 5_000 };

describe('judgeKeptAnswer', () => {
  it('re-applies the answer to an object that moved only in resourceVersion and managedFields', () => {
    expect(judgeKeptAnswer(kept(), bookkept, 1_100, limits)).toBe('replay');
  });

  it('calls the function again for any change it would see: no lost update', () => {
    const relabelled: KubeObject = { ...bookkept, metadata: { ...bookkept.metadata, labels: { app: 'shop' } } };
    const annotated: KubeObject = { ...bookkept, metadata: { ...bookkept.metadata, annotations: { a: 'b' } } };
    const deleting: KubeObject = { ...bookkept, metadata: { ...bookkept.metadata, deletionTimestamp: new Date('2026-01-01T00:00:00Z') } };
    const specChanged = { ...bookkept, spec: { nodeName: 'n1' } } as KubeObject;
    for (const changed of [relabelled, annotated, deleting, specChanged]) expect(judgeKeptAnswer(kept(), changed, 1_100, limits)).toBe('drop');
  });

  it('waits, without a call, while the cache still holds the version that conflicted, and gives up after maxStaleRetries', () => {
    expect(judgeKeptAnswer(kept(), sent, 1_100, limits)).toBe('wait');
    expect(judgeKeptAnswer(kept({ staleRetries: 2 }), sent, 1_100, limits)).toBe('wait');
    expect(judgeKeptAnswer(kept({ staleRetries: 3 }), sent, 1_100, limits)).toBe('drop');
  });

  it("waits past a version changed only in bookkeeping when the conflict said what the function saw changed (a metadata-only Loop's patch)", () => {
    expect(judgeKeptAnswer(kept({ seenChanged: true }), bookkept, 1_100, limits)).toBe('wait');
    expect(judgeKeptAnswer(kept({ seenChanged: true, staleRetries: 3 }), bookkept, 1_100, limits)).toBe('drop');
    expect(judgeKeptAnswer(kept({ seenChanged: true }), { ...bookkept, metadata: { ...bookkept.metadata, labels: { app: 'shop' } } }, 1_100, limits)).toBe('drop');
  });

  it('drops the answer of a deleted primary and an answer older than maxAgeMs', () => {
    expect(judgeKeptAnswer(kept(), undefined, 1_100, limits)).toBe('drop');
    expect(judgeKeptAnswer(kept(), bookkept, 6_001, limits)).toBe('drop');
    expect(judgeKeptAnswer(kept(), sent, 6_001, limits)).toBe('drop');
  });
});

describe('keepsAnswer', () => {
  const plain = { deleted: false, finalizing: false };
  const conflict = { result: 'conflict', message: 'stale' } as const;

  it('keeps an answer that only patched the primary and conflicted', () => {
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod]), conflict, plain)).toBe(true);
  });

  it('keeps nothing that applied, failed, asked for later, finalized, or belongs to a Loop with children', () => {
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod]), { result: 'done', refused: 0 }, plain)).toBe(false);
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod]), { result: 'failed', message: '500', retryable: true }, plain)).toBe(false);
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod], { requeueAfterSeconds: 5 }), conflict, plain)).toBe(false);
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod], { error: { type: 'temporary', message: 'x' } }), conflict, plain)).toBe(false);
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod], { finalized: true }), conflict, { deleted: false, finalizing: true })).toBe(false);
    expect(keepsAnswer({ owns: [{ apiVersion: 'v1', kind: 'Pod' }], related: [] }, sent, respond([patchPod]), conflict, plain)).toBe(false);
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod, { op: 'status', status: { ok: true } }]), conflict, plain)).toBe(false);
    // An apply of the primary counts as an own write, yet is never replayed: its object may pin a resourceVersion.
    const applyPod: Action = { op: 'apply', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', resourceVersion: '9' } } };
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([patchPod, applyPod]), conflict, plain)).toBe(false);
  });

  it('keeps an answer whose patch tests the version it was sent (as the SDK writes it), not one pinned to another', () => {
    const tested = (value: string): Action => ({
      op: 'patch',
      target: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1' },
      patch: [{ op: 'test', path: '/metadata/resourceVersion', value }, { op: 'add', path: '/metadata/labels/pod-name', value: 'web-1' }],
    });
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([tested('10')]), conflict, plain)).toBe(true);
    expect(keepsAnswer({ owns: [], related: [] }, sent, respond([tested('9')]), conflict, plain)).toBe(false);
  });
});

describe('ConflictReplays', () => {
  const answer = { primary: sent, response: respond([patchPod]), callMs: 2, answeredAt: 1_000 };

  it('hands the kept answer out once for a bookkeeping-only change', () => {
    const replays = new ConflictReplays(limits);
    replays.keep('shop/web-1', answer);
    expect(replays.take('shop/web-1', bookkept, 1_100)).toMatchObject({ response: answer.response, primary: sent });
    expect(replays.take('shop/web-1', bookkept, 1_100)).toBeUndefined();
  });

  it('moves the resourceVersion test of a replayed patch to the version it is applied to', () => {
    const replays = new ConflictReplays(limits);
    const sdkPatch: Action = { ...patchPod, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '10' }, { op: 'add', path: '/metadata/labels/pod-name', value: 'web-1' }] } as Action;
    replays.keep('shop/web-1', { ...answer, response: respond([sdkPatch]) });
    const replay = replays.take('shop/web-1', bookkept, 1_100);
    expect(replay !== 'wait' && replay?.response.actions[0]).toMatchObject({ patch: [{ op: 'test', value: '11' }, { op: 'add', value: 'web-1' }] });
  });

  it('keeps the answer while waiting on the cache, counting the waits, then lets the call happen', () => {
    const replays = new ConflictReplays(limits);
    replays.keep('shop/web-1', answer);
    for (let i = 0; i < 3; i += 1) expect(replays.take('shop/web-1', sent, 1_100)).toBe('wait');
    expect(replays.take('shop/web-1', sent, 1_100)).toBeUndefined();
    expect(replays.size).toBe(0);
  });

  it('drops the answer on a change the function sees, on forget, and keeps keys apart', () => {
    const replays = new ConflictReplays(limits);
    replays.keep('shop/web-1', answer);
    replays.keep('shop/web-2', answer);
    expect(replays.take('shop/web-1', { ...bookkept, metadata: { ...bookkept.metadata, labels: {} } }, 1_100)).toBeUndefined();
    expect(replays.take('shop/web-1', bookkept, 1_100)).toBeUndefined();
    replays.forget('shop/web-2');
    expect(replays.size).toBe(0);
  });

  it('starts the wait count afresh when an answer is kept again after a replay conflicted', () => {
    const replays = new ConflictReplays(limits);
    replays.keep('shop/web-1', answer);
    replays.take('shop/web-1', sent, 1_100);
    replays.take('shop/web-1', sent, 1_100);
    replays.keep('shop/web-1', { ...answer, primary: bookkept });
    for (let i = 0; i < 3; i += 1) expect(replays.take('shop/web-1', bookkept, 1_100)).toBe('wait');
  });
});
