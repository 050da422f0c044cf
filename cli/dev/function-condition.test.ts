// The LocalFunction condition kubeloop dev puts on a project's Loop or hook: names the command and its log.
import { describe, expect, it } from 'vitest';
import { localFunctionCondition, withLocalFunctionCondition } from './function-condition.ts';

const now = new Date('2026-11-28T20:00:00.123Z');
const state = { source: '`python3 function.py`', log: '/d/logs/function-dev-1.log', address: 'Service team-a/hello (127.1.2.3:8080)' };

describe('the LocalFunction condition', () => {
  it('names the command, its log and the Service when the function is not listening', () => {
    const condition = localFunctionCondition({ ...state, problem: 'it exited with code 1' }, now);
    expect(condition).toMatchObject({ type: 'LocalFunction', status: 'False', reason: 'NotListening', lastTransitionTime: '2026-11-28T20:00:00Z' });
    expect(condition.message).toContain('`python3 function.py`');
    expect(condition.message).toContain('/d/logs/function-dev-1.log');
    expect(condition.message).toContain('Service team-a/hello');
  });

  it('replaces only its own type, keeps the transition time while the status holds, and reports no change as none', () => {
    const ready = { type: 'Ready', status: 'True' as const, reason: 'Running', message: '', lastTransitionTime: 't0' };
    const up = localFunctionCondition(state, now);
    const first = withLocalFunctionCondition([ready], up) ?? [];
    expect(first.map((c) => c.type)).toEqual(['Ready', 'LocalFunction']);
    expect(withLocalFunctionCondition(first, localFunctionCondition(state, new Date()))).toBeUndefined();
    const down = withLocalFunctionCondition(first, localFunctionCondition({ ...state, problem: 'exited' }, new Date('2026-11-28T21:00:00Z'))) ?? [];
    expect(down.find((c) => c.type === 'LocalFunction')).toMatchObject({ status: 'False', lastTransitionTime: '2026-11-28T21:00:00Z' });
  });
});
