import { describe, expect, it } from 'vitest';
import type { Action, ReconcileRequest, ReconcileResponse } from '../contract/types.ts';
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

  describe('patches by effect on the recorded object', () => {
    const recorded = {
      apiVersion: 'kubeloop.dev/v1',
      kind: 'ReconcileRequest',
      loop: 'l',
      trigger: { type: 'MODIFIED' },
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'shop', resourceVersion: '7', labels: { x: 'old' } } },
      children: {},
      now: '2026-11-22T10:00:00Z',
    } as ReconcileRequest;
    const rv = { op: 'test', path: '/metadata/resourceVersion', value: '7' } as const;
    const patch = (...ops: Array<Record<string, unknown>>): Action => ({ op: 'patch', target: pod('a'), patch: [rv, ...ops] as never });
    const addX = patch({ op: 'add', path: '/metadata/labels/x', value: '1' });
    const replaceX = patch({ op: 'replace', path: '/metadata/labels/x', value: '1' });

    it('accepts replace where add was recorded when both leave the same object', () => {
      expect(compareResponses(reply([addX]), reply([replaceX]), { request: recorded })).toEqual([]);
    });

    it('compares text without the recorded request', () => {
      expect(compareResponses(reply([addX]), reply([replaceX]))).toHaveLength(1);
    });

    it('reports a patch with another effect, and one without the resourceVersion test', () => {
      const other = patch({ op: 'replace', path: '/metadata/labels', value: { x: '1' } }, { op: 'add', path: '/metadata/labels/y', value: '2' });
      expect(formatDifferences(compareResponses(reply([addX]), reply([other]), { request: recorded }), '')).toContain('actions on v1 Pod shop/a');
      const untested: Action = { op: 'patch', target: pod('a'), patch: [{ op: 'add', path: '/metadata/labels/x', value: '1' }] };
      expect(compareResponses(reply([addX]), reply([untested]), { request: recorded })).not.toEqual([]);
    });

    it('judges a second patch on the object the first one left', () => {
      // y exists only after the first patch: replacing it is right there, and wrong on the recorded object.
      const addY = patch({ op: 'add', path: '/metadata/labels/y', value: '1' });
      const thenAddY = patch({ op: 'add', path: '/metadata/labels/y', value: '2' });
      const thenReplaceY = patch({ op: 'replace', path: '/metadata/labels/y', value: '2' });
      expect(compareResponses(reply([addY, thenAddY]), reply([addY, thenReplaceY]), { request: recorded })).toEqual([]);
      expect(compareResponses(reply([thenAddY]), reply([thenReplaceY]), { request: recorded })).not.toEqual([]);
      expect(compareResponses(reply([addX, thenAddY]), reply([addY, thenReplaceY]), { request: recorded })).not.toEqual([]);
    });
  });

  describe('events by type and reason', () => {
    const event = (type: 'Normal' | 'Warning', reason: string, message: string): Action => ({ op: 'event', type, reason, message });

    it('accepts a reworded message unless strict', () => {
      const recorded = reply([event('Warning', 'TooLong', 'name has 69 characters')]);
      const reworded = reply([event('Warning', 'TooLong', 'the name is too long for a label')]);
      expect(compareResponses(recorded, reworded)).toEqual([]);
      expect(compareResponses(recorded, reworded, { strict: true })).toHaveLength(2);
    });

    it('reports another type or reason', () => {
      expect(compareResponses(reply([event('Warning', 'TooLong', 'm')]), reply([event('Normal', 'TooLong', 'm')]))).toHaveLength(2);
      expect(compareResponses(reply([event('Warning', 'TooLong', 'm')]), reply([event('Warning', 'Long', 'm')]))).toHaveLength(2);
    });
  });
});
