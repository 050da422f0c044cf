import { describe, expect, it } from 'vitest';
import type { ObjectHistory } from '../../router/history/history-documents.ts';
import { formatHistory } from './history-text.ts';

const base: ObjectHistory = {
  apiVersion: 'history.kubeloop.dev/v1alpha1',
  kind: 'ObjectHistory',
  metadata: { name: 'web', namespace: 'default' },
  loop: 'podset',
  object: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', namespace: 'default', name: 'web' },
  servedBy: 'router-0',
  entries: [],
};

describe('formatHistory', () => {
  it('says when nothing is recorded', () => {
    expect(formatHistory(base)).toBe('PodSet default/web, Loop podset, router router-0: no reconcile recorded');
  });

  it('shows each reconcile: outcome, durations, trace, triggers, actions and write results', () => {
    const text = formatHistory({
      ...base,
      entries: [
        {
          startedAt: '2026-11-26T10:00:00.000Z',
          traceId: 'abc',
          triggers: [{ source: 'primary', type: 'MODIFIED', kind: 'app.kubeloop.dev/v1alpha1/PodSet', object: 'default/web', resourceVersion: '42', at: 0 }],
          actions: ['create v1/Pod default/web-1'],
          writes: [{ action: 'create v1/Pod default/web-1', result: 'refused', status: 403, message: 'no', ms: 3 }],
          outcome: 'action-error',
          durations: { queueMs: 1, callMs: 5, applyMs: 4, totalMs: 10 },
        },
        { startedAt: '2026-11-26T10:00:01.000Z', triggers: [], actions: [], writes: [], outcome: 'ok', replayed: true, durations: { queueMs: 0, totalMs: 1 } },
      ],
    });
    expect(text).toBe(
      [
        'PodSet default/web, Loop podset, router router-0: 2 reconciles, oldest first',
        '',
        '2026-11-26T10:00:00.000Z  action-error  10ms (queue 1ms, call 5ms, apply 4ms)  trace abc',
        '  trigger   primary MODIFIED app.kubeloop.dev/v1alpha1/PodSet default/web rv=42',
        '  actions   create v1/Pod default/web-1',
        '  writes    create v1/Pod default/web-1 -> refused 403: no (3ms)',
        '',
        '2026-11-26T10:00:01.000Z  ok  replayed after a conflict, no call  1ms (queue 0ms)',
        '  trigger   REQUEUE (the router requeued the key)',
        '  actions   none',
      ].join('\n'),
    );
  });

  it('names the member that owns the key now (sharded routers)', () => {
    expect(formatHistory({ ...base, owner: 'router-1' })).toContain('the key belongs to router router-1 now');
  });
});
