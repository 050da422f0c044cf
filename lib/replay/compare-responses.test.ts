import { describe, expect, it } from 'vitest';
import type { Action, ReconcileResponse } from '../contract/types.ts';
import { compareResponses, formatDifferences } from './compare-responses.ts';

const reply = (actions: Action[], extra: Partial<ReconcileResponse> = {}): ReconcileResponse => ({
  apiVersion: 'kubeloop.dev/v1',
  kind: 'ReconcileResponse',
  actions,
  ...extra,
});
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name });
const patchOn = (name: string, value: string): Action => ({
  op: 'patch',
  target: pod(name),
  patch: [
    { op: 'test', path: '/metadata/resourceVersion', value: '7' },
    { op: 'add', path: '/metadata/labels/x', value },
  ],
});
const deleteOf = (name: string): Action => ({ op: 'delete', target: pod(name), preconditions: { uid: `uid-${name}` } });
const createOf = (name: string): Action => ({ op: 'create', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop' } } });
const warning = (reason: string): Action => ({ op: 'event', type: 'Warning', reason, message: reason });

describe('compareResponses', () => {
  it('accepts identical replies', () => {
    const actions = [patchOn('a', '1'), deleteOf('b'), warning('X')];
    expect(compareResponses(reply(actions, { requeueAfterSeconds: 30 }), reply(actions, { requeueAfterSeconds: 30 }))).toEqual([]);
  });

  it('ignores the order of actions on different targets', () => {
    expect(compareResponses(reply([createOf('a'), deleteOf('b'), patchOn('c', '1')]), reply([patchOn('c', '1'), deleteOf('b'), createOf('a')]))).toEqual([]);
  });

  it('ignores the order of events', () => {
    expect(compareResponses(reply([warning('A'), warning('B')]), reply([warning('B'), warning('A')]))).toEqual([]);
  });

  it('reports actions on the same target in a different order', () => {
    const first = patchOn('a', '1');
    const second = deleteOf('a');
    const differences = compareResponses(reply([first, second]), reply([second, first]));
    expect(differences).toHaveLength(1);
    expect(differences[0]?.message).toBe('same actions in a different order: expected patch, delete, got delete, patch (order matters on one target)');
  });

  it('reports status actions in a different order', () => {
    const a: Action = { op: 'status', status: { phase: 'A' } };
    const b: Action = { op: 'status', status: { phase: 'B' } };
    expect(compareResponses(reply([a, b]), reply([b, a]))[0]?.path).toBe('status actions');
  });

  it('names the path of a changed value inside an action', () => {
    const differences = compareResponses(reply([patchOn('a', '1')]), reply([patchOn('a', '2')]));
    expect(formatDifferences(differences, '')).toBe('actions on v1 Pod shop/a [#0/patch/1/value]: expected "1", got "2"');
  });

  it('reports missing and unexpected actions and events', () => {
    const differences = compareResponses(reply([createOf('a'), warning('Gone')]), reply([deleteOf('b'), warning('New')]));
    const text = formatDifferences(differences, '');
    expect(text).toContain('actions on v1 Pod shop/a [#0]: missing {"op":"create"');
    expect(text).toContain('actions on v1 Pod shop/b [#0]: unexpected {"op":"delete"');
    expect(text).toContain('events: missing {"op":"event","type":"Warning","reason":"Gone"');
    expect(text).toContain('events: unexpected {"op":"event","type":"Warning","reason":"New"');
  });

  it('reports differences outside the actions: requeue, finalized and error', () => {
    const differences = compareResponses(
      reply([], { requeueAfterSeconds: 30, error: { type: 'temporary', message: 'wait' } }),
      reply([], { finalized: true, error: { type: 'permanent', message: 'wait' } }),
    );
    expect(formatDifferences(differences, '')).toBe(
      ['/error/type: expected "temporary", got "permanent"', '/finalized: unexpected true', '/requeueAfterSeconds: missing (expected 30)'].join('\n'),
    );
  });

  it('treats one event twice as different from that event once', () => {
    expect(compareResponses(reply([warning('A'), warning('A')]), reply([warning('A')]))).toHaveLength(1);
  });

  it('ignores key order inside objects', () => {
    const a: Action = { op: 'status', status: { replicas: 1, phase: 'Ready' } };
    const b: Action = { op: 'status', status: { phase: 'Ready', replicas: 1 } };
    expect(compareResponses(reply([a]), reply([b]))).toEqual([]);
  });
});
