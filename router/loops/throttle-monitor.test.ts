// The Throttled sampler over running Loops: a Loop that waits is reported once, with its tenant's budget; a Loop at
// rest never is; a restarted Loop (a new runner) is sampled afresh, its condition going on from what it said.
import { describe, expect, it } from 'vitest';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { ThrottleReason } from '../base/throttle-condition.ts';
import type { ConditionInput } from '../../lib/kube/conditions.ts';
import { ThrottleMonitor, type ThrottleSource } from './throttle-monitor.ts';

const WINDOW_MS = 60_000;

/** A running Loop of `namespace` whose counters the test moves. */
function source(namespace: string, name: string, throttledAtStart?: ThrottleReason) {
  const counters = { call: 0, api: 0 };
  const loop: ThrottleSource = {
    name: `${namespace}/${name}`,
    config: { id: `${namespace}/${name}`, namespace } as LoopConfig,
    throttledAtStart,
    callWaitMs: () => counters.call,
    apiWaitMs: () => counters.api,
  };
  return { loop, counters };
}

function monitor(loops: () => ThrottleSource[]) {
  const clock = { now: 0 };
  const reports: Array<{ name: string; condition: ConditionInput }> = [];
  const m = new ThrottleMonitor({ maxCallsInFlight: 64, apiQps: 200, weightOf: (tenant) => (tenant === 'team-a' ? 2 : 1), loops, report: (name, condition) => reports.push({ name, condition }), windowMs: WINDOW_MS, now: () => clock.now });
  /** `intervals` samples 10 s apart, each moving the counters first. */
  const run = (intervals: number, move: () => void = () => {}) => {
    for (let i = 0; i < intervals; i += 1) {
      clock.now += WINDOW_MS / 6;
      move();
      m.tick();
    }
  };
  return { m, reports, run };
}

describe('ThrottleMonitor', () => {
  it('reports a Loop that waits for call slots as Throttled, once, with its budget, and none at rest', () => {
    const busy = source('team-a', 'busy');
    const quiet = source('team-b', 'quiet');
    const { reports, run } = monitor(() => [busy.loop, quiet.loop]);
    run(1);
    run(6, () => (busy.counters.call += 8_000));
    expect(reports).toEqual([
      {
        name: 'team-a/busy',
        condition: { type: 'Throttled', status: 'True', reason: 'CallShare', message: "keys waited 80% of the last 30s for a call slot: tenant team-a's share (weight 2) of 64 calls in flight shared by all Loops (--max-calls-in-flight)" },
      },
    ]);
    run(8);
    expect(reports.map((r) => [r.name, r.condition.status, r.condition.reason])).toEqual([
      ['team-a/busy', 'True', 'CallShare'],
      ['team-a/busy', 'False', 'NotThrottled'],
    ]);
  });

  it('names the API budget when requests waited for tokens', () => {
    const busy = source('team-b', 'writer');
    const { reports, run } = monitor(() => [busy.loop]);
    run(1);
    run(6, () => (busy.counters.api += 6_000));
    expect(reports).toEqual([{ name: 'team-b/writer', condition: expect.objectContaining({ status: 'True', reason: 'ApiBudget', message: expect.stringContaining("tenant team-b's share (weight 1) of 200 requests/s") }) }]);
  });

  it('samples a restarted Loop afresh and goes on from its condition: cleared once the new runner does not wait', () => {
    const first = source('team-a', 'x');
    let running = [first.loop];
    const { reports, run } = monitor(() => running);
    run(1);
    run(6, () => (first.counters.call += 9_000));
    expect(reports.map((r) => r.condition.status)).toEqual(['True']);
    // A new runner's counters start at 0 and its condition said True when it started (throttledAtStart).
    const second = source('team-a', 'x', 'CallShare');
    running = [second.loop];
    run(3);
    expect(reports).toHaveLength(1);
    run(1);
    expect(reports.map((r) => [r.name, r.condition.status, r.condition.message])).toEqual([
      ['team-a/x', 'True', expect.stringContaining('90%')],
      ['team-a/x', 'False', 'waited 0% of the last 30s for its tenant\'s share; not throttled'],
    ]);
  });

  it('keeps a restarted Loop Throttled without a second report while the new runner waits as much', () => {
    const loop = source('team-a', 'x', 'CallShare');
    const { reports, run } = monitor(() => [loop.loop]);
    run(1);
    run(8, () => (loop.counters.call += 9_000));
    expect(reports).toEqual([]);
  });

  it('reports a Loop at rest nothing, however long', () => {
    const loops = Array.from({ length: 50 }, (_, i) => source(`team-${i}`, 'idle').loop);
    const { reports, run } = monitor(() => loops);
    run(60);
    expect(reports).toEqual([]);
  });
});
