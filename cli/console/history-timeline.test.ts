import { describe, expect, it } from 'vitest';
import type { ObjectHistory } from '../../router/history/history-documents.ts';
import type { ReconcileRecord } from '../../router/reconcile/flight-recorder.ts';
import { buildTimeline } from './history-timeline.ts';

const entry = (at: string, outcome: string, actions: string[], extra: Partial<ReconcileRecord> = {}): ReconcileRecord => ({
  startedAt: at,
  triggers: [{ source: 'primary', type: 'MODIFIED', kind: 'app.kubeloop.dev/v1alpha1/PodSet', object: 'default/web', resourceVersion: '42', at: 0 }],
  actions,
  writes: actions.map((action) => ({ action, result: 'applied', ms: 3 })),
  outcome,
  durations: { queueMs: 1, callMs: 2, applyMs: 3, totalMs: 6 },
  ...extra,
});

const history = (entries: ReconcileRecord[]): ObjectHistory => ({
  apiVersion: 'history.kubeloop.dev/v1alpha1',
  kind: 'ObjectHistory',
  metadata: { name: 'web', namespace: 'default' },
  loop: 'podset',
  object: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', namespace: 'default', name: 'web' },
  servedBy: 'router-1',
  entries,
});

describe('buildTimeline', () => {
  it('lists reconciles newest first with their triggers, and what each answer changed since the previous one', () => {
    const t = buildTimeline(
      history([
        entry('2026-11-28T10:00:00Z', 'ok', ['create v1/Pod default/web-a', 'patch app.kubeloop.dev/v1alpha1/PodSet default/web']),
        entry('2026-11-28T10:00:01Z', 'ok', ['create v1/Pod default/web-b', 'patch app.kubeloop.dev/v1alpha1/PodSet default/web']),
      ]),
    );
    expect(t.entries.map((e) => e.startedAt)).toEqual(['2026-11-28T10:00:01Z', '2026-11-28T10:00:00Z']);
    expect(t.entries[0]).toMatchObject({ triggers: ['primary MODIFIED app.kubeloop.dev/v1alpha1/PodSet default/web rv=42'], diff: { added: ['create v1/Pod default/web-b'], removed: ['create v1/Pod default/web-a'] }, failed: false });
    expect(t.entries[1]?.diff).toBeUndefined();
  });

  it('counts conflicts, marks failures, and diffs across a reconcile that did not answer', () => {
    const t = buildTimeline(
      history([
        entry('t1', 'ok', ['patch v1/ConfigMap default/web']),
        entry('t2', 'function-error', [], { callError: 'Timeout', triggers: [] }),
        entry('t3', 'conflict', ['patch v1/ConfigMap default/web'], { writes: [{ action: 'patch v1/ConfigMap default/web', result: 'conflict', status: 409, ms: 2 }] }),
      ]),
    );
    const [third, second] = t.entries;
    expect(second).toMatchObject({ failed: true, callError: 'Timeout', triggers: ['REQUEUE (the router requeued the key)'] });
    expect(second?.diff).toBeUndefined();
    expect(third).toMatchObject({ failed: true, conflicts: 1, diff: { added: [], removed: [] } });
  });

  it('says when two reconciles were shown the same world (same request digest)', () => {
    const t = buildTimeline(history([entry('t1', 'conflict', ['a'], { requestDigest: 'd1' }), entry('t2', 'ok', ['a'], { requestDigest: 'd1', replayed: true })]));
    expect(t.entries[0]).toMatchObject({ sameRequest: true, replayed: true });
  });
});
