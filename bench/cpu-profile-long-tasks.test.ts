// The long-task reading of a CPU profile: busy stretches between idle samples, charged to the kubeloop frame nearest
// the top of the stack, and a sample the process spent waiting for a core counted as one interval, not as work.
import { describe, expect, it } from 'vitest';
import { longTasks, type CpuProfile } from './cpu-profile-long-tasks.ts';

const frame = (id: number, functionName: string, url = '', children?: number[]) => ({ id, callFrame: { functionName, url, lineNumber: 0 }, ...(children ? { children } : {}) });

const profile = (samples: number[], timeDeltas: number[]): CpuProfile => ({
  nodes: [
    frame(1, '(root)', '', [2, 3, 5]),
    frame(2, '(idle)'),
    frame(3, 'reconcileKey', 'file:///w/router/reconcile/reconcile-key.ts', [4]),
    frame(4, 'stringify', 'file:///w/node_modules/fast-json/index.js'),
    frame(5, '(garbage collector)'),
  ],
  samples,
  timeDeltas,
  startTime: 0,
  endTime: 0,
});

describe('longTasks', () => {
  it('finds the stretches without an idle sample and charges a package frame to the kubeloop caller', () => {
    // idle, 6 busy samples of 1 ms (one GC), idle, 2 busy, idle
    const tasks = longTasks(profile([2, 3, 4, 4, 5, 3, 3, 2, 3, 3, 2], Array(11).fill(1000)), 5);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ startMs: 2, ms: 6, cpuMs: 6, gcMs: 1 });
    expect(tasks[0]!.byFrame.get('reconcileKey reconcile/reconcile-key.ts:1')).toBe(5);
  });

  it('counts a sample whose delta is a wait for a core as one sampling interval', () => {
    // a 100 ms gap before the 4th sample: the process was off its core, not running reconcileKey
    const tasks = longTasks(profile([2, 3, 3, 3, 3, 2], [1000, 1000, 1000, 100_000, 1000, 1000]), 5);
    expect(tasks).toEqual([]);
    const wall = longTasks(profile([2, 3, 3, 3, 3, 2], [1000, 1000, 1000, 100_000, 1000, 1000]), 3);
    expect(wall[0]).toMatchObject({ ms: 103, cpuMs: 4 });
  });
});
