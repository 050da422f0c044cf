import { describe, expect, it } from 'vitest';
import { nextCondition, withCondition } from './conditions.ts';
import type { Condition } from '../../api/meta.ts';

const ready = (status: 'True' | 'False', reason: string, lastTransitionTime = '2026-11-01T00:00:00Z'): Condition => ({ type: 'Ready', status, reason, message: reason, lastTransitionTime });

describe('the condition writer', () => {
  it('keeps lastTransitionTime while the status stays, whatever the reason or message', () => {
    expect(nextCondition(ready('False', 'Waiting'), { type: 'Ready', status: 'False', reason: 'Forbidden', message: 'no' }, '2026-11-02T00:00:00Z').lastTransitionTime).toBe('2026-11-01T00:00:00Z');
  });
  it('sets it to now on a change of status and on the first write', () => {
    expect(nextCondition(ready('False', 'Waiting'), { type: 'Ready', status: 'True', reason: 'Running', message: '' }, '2026-11-02T00:00:00Z').lastTransitionTime).toBe('2026-11-02T00:00:00Z');
    expect(nextCondition(undefined, { type: 'Ready', status: 'True', reason: 'Running', message: '' }, '2026-11-02T00:00:00Z').lastTransitionTime).toBe('2026-11-02T00:00:00Z');
  });
  it('replaces the condition of the same type in a list, or appends it', () => {
    const other: Condition = { type: 'Throttled', status: 'False', reason: 'NotThrottled', message: '', lastTransitionTime: '2026-11-01T00:00:00Z' };
    expect(withCondition([other, ready('False', 'Waiting')], { type: 'Ready', status: 'True', reason: 'Running', message: '' }, 'now').map((c) => [c.type, c.status])).toEqual([['Throttled', 'False'], ['Ready', 'True']]);
    expect(withCondition([other], { type: 'Ready', status: 'True', reason: 'Running', message: '' }, 'now')).toHaveLength(2);
  });
});
