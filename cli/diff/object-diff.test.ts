import { describe, expect, it } from 'vitest';
import type { Action, KubeObject, ReconcileRequest, ReconcileResponse } from '../../lib/contract/types.ts';
import { changesAgainstLive, diffResponses, exitCodeOf, formatChange, summarise, summaryTable } from './object-diff.ts';

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-1', namespace: 'shop', resourceVersion: '7', labels: { app: 'web' } } };
const request: ReconcileRequest = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', trigger: { type: 'RESYNC' }, object: pod, children: {}, now: '2026-01-01T00:00:00Z' };
const target = { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1' };
const reply = (actions: Action[], extra: Partial<ReconcileResponse> = {}): ReconcileResponse => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions, ...extra });
const label = (key: string, value: string): Action => ({ op: 'patch', target, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '7' }, { op: 'add', path: `/metadata/labels/${key}`, value }] });

describe('diffResponses', () => {
  it('finds nothing when both versions answer the same effect, even with a differently written patch', () => {
    const replace: Action = { op: 'patch', target, patch: [{ op: 'test', path: '/metadata/resourceVersion', value: '7' }, { op: 'replace', path: '/metadata/labels', value: { app: 'web', x: '1' } }] };
    expect(diffResponses(request, reply([label('x', '1')]), reply([replace]))).toEqual({ targets: [], response: [] });
  });

  it('lists only the targets whose actions differ, with both versions\' actions', () => {
    const event: Action = { op: 'event', type: 'Normal', reason: 'Labelled', message: 'm' };
    const diff = diffResponses(request, reply([label('old', 'web-1'), event]), reply([label('new', 'web-1'), event]));
    expect(diff.targets.map((t) => t.target)).toEqual(['v1 Pod shop/web-1']);
    expect(diff.targets[0]?.baseline).toEqual([label('old', 'web-1')]);
    expect(diff.targets[0]?.candidate).toEqual([label('new', 'web-1')]);
    expect(diff.targets[0]?.differences.length).toBeGreaterThan(0);
    expect(diff.response).toEqual([]);
  });

  it('reports an action only the new version takes, and a changed requeue outside the actions', () => {
    const diff = diffResponses(request, reply([]), reply([label('new', 'web-1')], { requeueAfterSeconds: 30 }));
    expect(diff.targets).toHaveLength(1);
    expect(diff.targets[0]?.baseline).toEqual([]);
    expect(diff.response).toEqual([{ path: '/requeueAfterSeconds', message: 'only the new version: 30' }]);
    expect(diff.targets[0]?.differences[0]?.message).toMatch(/^only the new version: \{"op":"patch"/);
  });

  it('words a changed value as the running and the new version', () => {
    const diff = diffResponses(request, reply([], { requeueAfterSeconds: 10 }), reply([], { requeueAfterSeconds: 30 }));
    expect(diff.response).toEqual([{ path: '/requeueAfterSeconds', message: 'running version 10, new version 30' }]);
  });
});

describe('changesAgainstLive', () => {
  it('shows added, removed and changed fields and hides managedFields and resourceVersion', () => {
    const live = { metadata: { resourceVersion: '7', managedFields: [{ manager: 'a' }], labels: { app: 'web', gone: 'x' } }, spec: { n: 1 } };
    const after = { metadata: { resourceVersion: '8', managedFields: [{ manager: 'a' }, { manager: 'b' }], labels: { app: 'web', added: 'y' } }, spec: { n: 2 } };
    expect(changesAgainstLive(live, after).map(formatChange)).toEqual(['+ /metadata/labels/added: "y"', '- /metadata/labels/gone: "x"', '~ /spec/n: 1 -> 2']);
  });
});

describe('summary and exit code', () => {
  it('exits 0 without changes, 1 with changes, 2 when any object could not be compared', () => {
    expect(exitCodeOf(summarise(['unchanged', 'skipped']))).toBe(0);
    expect(exitCodeOf(summarise(['unchanged', 'changed']))).toBe(1);
    expect(exitCodeOf(summarise(['changed', 'error', 'unchanged']))).toBe(2);
    expect(exitCodeOf(summarise([]))).toBe(0);
  });

  it('counts each outcome and prints them as a table', () => {
    const summary = summarise(['changed', 'unchanged', 'unchanged', 'error', 'skipped']);
    expect(summary).toEqual({ objects: 5, changed: 1, unchanged: 2, errors: 1, skipped: 1 });
    expect(summaryTable(summary, { 'API CALLS': 12 }).split('\n')).toEqual(['OBJECTS  CHANGED  UNCHANGED  ERRORS  SKIPPED  API CALLS', '5        1        2          1       1        12']);
  });
});
