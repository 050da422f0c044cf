import { describe, expect, it } from 'vitest';
import { conditionsOf, toMetaTime, withCondition, type Condition } from './conditions.ts';

const ready: Condition = {
  type: 'Ready',
  status: 'False',
  reason: 'ScalingUp',
  message: '1 of 3 pods available',
  lastTransitionTime: '2026-11-22T09:00:00Z',
};

describe('withCondition', () => {
  it('keeps lastTransitionTime when the status value stays the same', () => {
    const next = withCondition([ready], { ...ready, message: '2 of 3 pods available' }, '2026-11-22T10:00:00Z');
    expect(next).toEqual([{ ...ready, message: '2 of 3 pods available' }]);
  });

  it('moves lastTransitionTime to now when the status value flips', () => {
    const next = withCondition([ready], { ...ready, status: 'True', reason: 'AllReplicasAvailable' }, '2026-11-22T10:00:00Z');
    expect(next[0]?.lastTransitionTime).toBe('2026-11-22T10:00:00Z');
  });

  it('appends a condition of a new type and leaves the others alone', () => {
    const next = withCondition([ready], { type: 'Done', status: 'False', reason: 'Waiting', message: '' }, '2026-11-22T10:00:00Z');
    expect(next.map((c) => c.type)).toEqual(['Ready', 'Done']);
    expect(next[0]).toBe(ready);
  });
});

describe('conditionsOf', () => {
  it('reads conditions and ignores malformed entries', () => {
    expect(conditionsOf({ status: { conditions: [ready, 'junk', null] } })).toEqual([ready]);
    expect(conditionsOf({})).toEqual([]);
  });
});

describe('toMetaTime', () => {
  it('truncates to whole seconds in UTC', () => {
    expect(toMetaTime('2026-11-22T10:00:00.987Z')).toBe('2026-11-22T10:00:00Z');
    expect(toMetaTime('2026-11-22T11:00:00+01:00')).toBe('2026-11-22T10:00:00Z');
  });

  it('rejects a clock that is not a time', () => {
    expect(() => toMetaTime('yesterday')).toThrow(/request.now "yesterday"/);
  });
});
