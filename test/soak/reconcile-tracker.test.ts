import { describe, expect, it } from 'vitest';
import { reconcileCallOf, ReconcileTracker } from './reconcile-tracker.ts';

const call = (key: string, reconcileId: string, startMs: number) => ({ loop: 'podset', key, reconcileId, via: 'podset', startMs });

describe('ReconcileTracker', () => {
  it('reports two reconciles of one key in flight at once, not one after the other', () => {
    const tracker = new ReconcileTracker();
    tracker.begin(call('ns/a', 'r1', 1))();
    const end2 = tracker.begin(call('ns/a', 'r2', 2));
    const end3 = tracker.begin(call('ns/b', 'r3', 3));
    expect(tracker.overlaps).toEqual([]);
    tracker.begin(call('ns/a', 'r4', 4));
    expect(tracker.overlaps).toEqual([{ atMs: 4, loop: 'podset', key: 'ns/a', reconcileIds: ['r2', 'r4'] }]);
    end2();
    end2();
    end3();
    expect(tracker.inFlight).toBe(1);
    expect(tracker.calls).toBe(4);
  });

  it('keeps keys of different Loops apart', () => {
    const tracker = new ReconcileTracker();
    tracker.begin(call('ns/a', 'r1', 1));
    tracker.begin({ ...call('ns/a', 'r2', 2), loop: 'pod-name-label' });
    expect(tracker.overlaps).toEqual([]);
  });
});

describe('reconcileCallOf', () => {
  it('reads loop, key and reconcileId from a ReconcileRequest', () => {
    const body = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', loop: 'at', reconcileId: 'x1', object: { metadata: { namespace: 'soak', name: 'at-3' } } });
    expect(reconcileCallOf(body)).toEqual({ loop: 'at', key: 'soak/at-3', reconcileId: 'x1' });
  });

  it('returns undefined for anything else', () => {
    expect(reconcileCallOf('not json')).toBeUndefined();
    expect(reconcileCallOf('{"loop":"at"}')).toBeUndefined();
  });
});
