import { describe, expect, it } from 'vitest';
import type { Action, KubeObject, ReconcileResponse } from '../../lib/contract/types.ts';
import { answerCoversOwnWrite, OwnWrites } from './own-writes.ts';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'shop', name: 'web-1', resourceVersion: '10' } };
const patchPod: Action = {
  op: 'patch',
  target: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1' },
  patch: [{ op: 'add', path: '/metadata/labels/pod-name', value: 'web-1' }],
};
const applyObject: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', labels: { 'pod-name': 'web-1' } } };
const applyPod: Action = { op: 'apply', object: applyObject };
const respond = (actions: Action[], extra: Partial<ReconcileResponse> = {}): ReconcileResponse => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions, ...extra });
const plain = { deleted: false, finalizing: false };
const noChildren = { owns: [], related: [] };

describe('answerCoversOwnWrite', () => {
  it('covers an answer that only patches the primary (events aside)', () => {
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod]), plain)).toBe(true);
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod, { op: 'event', type: 'Normal', reason: 'Labelled', message: 'x' }]), plain)).toBe(true);
  });

  it('covers an answer that only server-side applies the primary (its namespace defaulting to the primary\'s)', () => {
    expect(answerCoversOwnWrite(noChildren, pod, respond([applyPod]), plain)).toBe(true);
    const sameNamespace: Action = { op: 'apply', object: { ...applyObject, metadata: { ...applyObject.metadata, namespace: 'shop' } } };
    expect(answerCoversOwnWrite(noChildren, pod, respond([sameNamespace, patchPod, { op: 'event', type: 'Normal', reason: 'Applied', message: 'x' }]), plain)).toBe(true);
  });

  it('does not cover an apply of any other object: another name, namespace or kind, or none at all', () => {
    const applying = (metadata: KubeObject['metadata'], kind = 'Pod'): Action => ({ op: 'apply', object: { apiVersion: 'v1', kind, metadata } });
    expect(answerCoversOwnWrite(noChildren, pod, respond([applying({ name: 'web-2' })]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([applying({ name: 'web-1', namespace: 'other' })]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([applying({ name: 'web-1' }, 'ConfigMap')]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([applying({})]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([applyPod, applying({ name: 'web-1-copy' }, 'ConfigMap')]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([applyPod, { op: 'delete', target: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1' } }]), plain)).toBe(false);
    expect(answerCoversOwnWrite({ owns: [{ apiVersion: 'v1', kind: 'ConfigMap' }], related: [] }, pod, respond([applyPod]), plain)).toBe(false);
  });

  it('does not cover an answer without a write: there is no follow-up event to skip', () => {
    expect(answerCoversOwnWrite(noChildren, pod, respond([]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([{ op: 'event', type: 'Warning', reason: 'TooLong', message: 'x' }]), plain)).toBe(false);
  });

  it('does not cover writes to other objects, status, creates or deletes', () => {
    const other: Action = { ...patchPod, target: { ...(patchPod as { target: object }).target, name: 'web-2' } } as Action;
    expect(answerCoversOwnWrite(noChildren, pod, respond([other]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod, { op: 'status', status: { ready: true } }]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod, { op: 'create', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } }]), plain)).toBe(false);
  });

  it('does not cover an answer that asks for a later call, errors, or finalizes', () => {
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod], { requeueAfterSeconds: 30 }), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod], { error: { type: 'temporary', message: 'later' } }), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod], { finalized: true }), { deleted: false, finalizing: true })).toBe(false);
  });

  it('does not cover a Loop with children: the next request could differ by more than our patch', () => {
    expect(answerCoversOwnWrite({ owns: [{ apiVersion: 'v1', kind: 'Pod' }], related: [] }, pod, respond([patchPod]), plain)).toBe(false);
  });

  it('does not cover a Loop with related objects, nor an answer with requires: a related change may be coalesced with our event', () => {
    expect(answerCoversOwnWrite({ owns: [], related: [{ name: 'config' }] }, pod, respond([patchPod]), plain)).toBe(false);
    expect(answerCoversOwnWrite(noChildren, pod, respond([patchPod], { requires: [{ name: 'db', apiVersion: 'v1', kind: 'Secret', names: ['db'] }] }), plain)).toBe(false);
  });
});

describe('OwnWrites', () => {
  it('skips once, for exactly the resourceVersion our write produced', () => {
    const writes = new OwnWrites();
    writes.remember('shop/web-1', '11');
    expect(writes.consume('shop/web-1', '11')).toBe(true);
    // Used up: a resync of the same object afterwards is called as usual.
    expect(writes.consume('shop/web-1', '11')).toBe(false);
  });

  it('calls for any other resourceVersion (another writer came between) and forgets the entry', () => {
    const writes = new OwnWrites();
    writes.remember('shop/web-1', '11');
    expect(writes.consume('shop/web-1', '12')).toBe(false);
    expect(writes.size).toBe(0);
    expect(writes.consume('shop/web-2', '11')).toBe(false);
  });

  it('forgets a deleted key', () => {
    const writes = new OwnWrites();
    writes.remember('shop/web-1', '11');
    writes.forget('shop/web-1');
    expect(writes.consume('shop/web-1', '11')).toBe(false);
  });
});
