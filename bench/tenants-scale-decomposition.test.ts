// bench:tenants-scale's decomposition: a quiet change is matched to its call and its router history by what it wrote.
import { describe, expect, it } from 'vitest';
import { decompose, flowControl, formatDecomposition, routerSeen, summarize } from './tenants-scale-decomposition.ts';

const line = (loop: string, rv: string, at: number, startedAt: number, source = 'primary') =>
  JSON.stringify({ loop, key: 'scale-0009/primary', startedAt: new Date(startedAt).toISOString(), triggers: [{ source, type: 'MODIFIED', resourceVersion: rv, at }] });

describe('tenants-scale decomposition', () => {
  it('reads the primary events of one Loop from history lines, the first per resourceVersion', () => {
    const withApply = JSON.stringify({ loop: 'scale-0009/copier', startedAt: new Date(5_005).toISOString(), durations: { queueMs: 0, applyMs: 12, totalMs: 20 }, triggers: [{ source: 'primary', type: 'MODIFIED', resourceVersion: '13', at: 5_000 }] });
    expect(routerSeen(withApply, 'scale-0009/copier').get('13')).toEqual({ seenAt: 5_000, startedAt: 5_005, applyMs: 12 });
    const text = [line('scale-0009/copier', '10', 1_000, 1_005), line('scale-0001/copier', '11', 2_000, 2_005), line('scale-0009/copier', '12', 3_000, 3_010, 'child'), line('scale-0009/copier', '10', 4_000, 4_005), ''].join('\n');
    const seen = routerSeen(text, 'scale-0009/copier');
    expect([...seen]).toEqual([['10', { seenAt: 1_000, startedAt: 1_005 }]]);
  });

  it('cuts a change into segments by its annotation, the first call only, and leaves the router out when not in the history', () => {
    const writes = [
      { changedAt: 100, answeredAt: 110, resourceVersion: '10', watchedAt: 114 },
      { changedAt: 300, answeredAt: 305, resourceVersion: '20' },
      { changedAt: 500, answeredAt: 505, resourceVersion: '30' },
    ];
    const arrivals = [
      { namespace: 'q', changedAt: 100, resourceVersion: '10', builtAt: 140, receivedAt: 150 },
      { namespace: 'q', changedAt: 100, resourceVersion: '10', builtAt: 900, receivedAt: 910 },
      { namespace: 'q', changedAt: 300, resourceVersion: '20', builtAt: 330, receivedAt: 331 },
    ];
    const out = decompose(writes, arrivals, new Map([['10', { seenAt: 120, startedAt: 135, applyMs: 7 }]]));
    expect(out).toEqual([
      { total: 50, write: 10, delivered: 4, toRouter: 6, queue: 15, build: 5, call: 10, apply: 7 },
      { total: 31, write: 5, call: 1 },
    ]);
    const summary = summarize(out);
    expect(summary).toMatchObject({ samples: 2, withRouter: 1, totalP99: 50, segments: { queue: { p50: 15, tailMean: 15 }, write: { tailMean: 10 } } });
    expect(formatDecomposition('busy', summary)).toContain('queue 15/15');
    expect(formatDecomposition('busy', summary)).toContain('then its own write (apply) p50/p99 7/7');
    const load = { patchesPerS: 400, routerCpuMsPerS: 900, functionCpuMsPerS: 200, apiCpuMsPerS: 1100, routerLagP99Ms: 120, routerLagMaxMs: 300 };
    expect(formatDecomposition('busy', summary, load)).toContain('router CPU 900 ms/s, event-loop delay p99 120 ms (max 300)');
  });

  it('reads what each APF priority level dispatched over a phase and the mean wait in its queues, levels with nothing left out', () => {
    const m = (name: string, level: string, value: number, schema = 'x') => ({ name, labels: { priority_level: level, flow_schema: schema }, value });
    const before = [
      m('apiserver_flowcontrol_dispatched_requests_total', 'exempt', 100),
      m('apiserver_flowcontrol_dispatched_requests_total', 'workload-low', 10, 'service-accounts'),
      m('apiserver_flowcontrol_dispatched_requests_total', 'global-default', 5),
      m('apiserver_flowcontrol_request_wait_duration_seconds_sum', 'workload-low', 0.5, 'service-accounts'),
      m('apiserver_flowcontrol_request_wait_duration_seconds_count', 'workload-low', 10, 'service-accounts'),
    ];
    const after = [
      m('apiserver_flowcontrol_dispatched_requests_total', 'exempt', 1100),
      m('apiserver_flowcontrol_dispatched_requests_total', 'workload-low', 200, 'service-accounts'),
      m('apiserver_flowcontrol_dispatched_requests_total', 'workload-low', 10, 'other'),
      m('apiserver_flowcontrol_dispatched_requests_total', 'global-default', 5),
      m('apiserver_flowcontrol_request_wait_duration_seconds_sum', 'workload-low', 2.5, 'service-accounts'),
      m('apiserver_flowcontrol_request_wait_duration_seconds_count', 'workload-low', 210, 'service-accounts'),
      m('apiserver_flowcontrol_rejected_requests_total', 'workload-low', 3, 'service-accounts'),
    ];
    const shares = flowControl(before, after);
    expect(shares).toEqual([
      { priorityLevel: 'exempt', dispatched: 1000, meanWaitMs: 0, rejected: 0 },
      { priorityLevel: 'workload-low', dispatched: 200, meanWaitMs: 10, rejected: 3 },
    ]);
    const load = { patchesPerS: 400, routerCpuMsPerS: 900, functionCpuMsPerS: 200, apiCpuMsPerS: 1100, routerLagP99Ms: 120, routerLagMaxMs: 300, flowControl: shares };
    expect(formatDecomposition('busy', summarize([]), { ...load, apiTokenWaits: { count: 4, seconds: 0.25 } })).toContain('router requests that waited for an API token: 4 (250 ms in all)');
    expect(formatDecomposition('busy', summarize([]), load)).toContain('API Priority and Fairness, dispatched (mean queue wait): exempt 1000 (0.0 ms), workload-low 200 (10.0 ms, 3 rejected)');
  });
});
