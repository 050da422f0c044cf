import { describe, expect, it } from 'vitest';
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { FlightRecorder } from '../reconcile/flight-recorder.ts';
import { OwnWrites } from '../reconcile/own-writes.ts';
import { watchEvent, WatchEventLog, type WatchEvent } from '../base/watch-events.ts';
import { maySettleAtIntake, OWN_WRITE_SEEN, settleOwnWrite, settleWaitingOwnWrite, type OwnWriteIntake } from './own-write-intake.ts';

const spec = { for: { apiVersion: 'v1', kind: 'Pod' }, serviceAccount: { namespace: 'shop', name: 's' }, function: { url: 'http://f.team.svc:80/' } };
const loop = parseLoop({ kind: 'ClusterLoop', metadata: { name: 'label' }, spec });
const finalizing = parseLoop({ kind: 'ClusterLoop', metadata: { name: 'label' }, spec: { ...spec, finalize: true } });
const pod = (resourceVersion: string, extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'shop', name: 'web-1', resourceVersion, ...extra } });
const modified: Trigger = { type: 'MODIFIED' };
const idle = { queued: false, hasFunction: true };
/** The key's log of waiting events, as the runner keeps it. */
const waiting = (...events: WatchEvent[]) => {
  const log = new WatchEventLog();
  for (const event of events) log.add('shop/web-1', event);
  return log;
};

describe('maySettleAtIntake', () => {
  it('settles a MODIFIED event of a key the queue does not hold', () => {
    expect(maySettleAtIntake(loop, pod('11'), modified, idle)).toBe(true);
  });

  it('leaves every other event to the queue: an add, a resync, a related or child change', () => {
    for (const type of ['ADDED', 'RESYNC', 'RELATED', 'REQUEUE'] as const) expect(maySettleAtIntake(loop, pod('11'), { type } as Trigger, idle)).toBe(false);
  });

  it('leaves a key waiting or being reconciled to that reconcile (it consumes the entry with the events it coalesced)', () => {
    expect(maySettleAtIntake(loop, pod('11'), modified, { queued: true, hasFunction: true })).toBe(false);
  });

  it('leaves it to the reconcile when the function does not resolve (that reconcile sends nothing and consumes nothing)', () => {
    expect(maySettleAtIntake(loop, pod('11'), modified, { queued: false, hasFunction: false })).toBe(false);
  });

  it('leaves it to the reconcile when the finalizer comes first: missing, or the primary being deleted', () => {
    expect(maySettleAtIntake(finalizing, pod('11'), modified, idle)).toBe(false);
    expect(maySettleAtIntake(finalizing, pod('11', { finalizers: [finalizing.finalizer] }), modified, idle)).toBe(true);
    expect(maySettleAtIntake(finalizing, pod('11', { finalizers: [finalizing.finalizer], deletionTimestamp: '2026-11-29T00:00:00Z' }), modified, idle)).toBe(false);
    expect(maySettleAtIntake(loop, pod('11', { deletionTimestamp: '2026-11-29T00:00:00Z' }), modified, idle)).toBe(false);
  });
});

describe('settleOwnWrite', () => {
  function intake(queued = false) {
    const forgotten: string[] = [];
    let counted = 0;
    const history = new FlightRecorder();
    const ownWrites = new OwnWrites();
    const settings: OwnWriteIntake = {
      loop,
      ownWrites,
      queue: { holds: () => queued, forget: (key) => forgotten.push(key) },
      history,
      hasFunction: () => true,
      counted: () => (counted += 1),
    };
    return { settings, ownWrites, history, forgotten, counted: () => counted };
  }

  it('settles the event at exactly the version our write produced: counted, the key forgotten, and the history entry a reconcile would leave', () => {
    const t = intake();
    t.ownWrites.remember('shop/web-1', '11');
    expect(settleOwnWrite(t.settings, 'shop/web-1', pod('11'), modified)).toBe(true);
    expect(t.counted()).toBe(1);
    expect(t.forgotten).toEqual(['shop/web-1']);
    const [entry] = t.history.history(loop.id, 'shop/web-1');
    expect(entry).toMatchObject({ outcome: OWN_WRITE_SEEN, actions: [], writes: [], triggers: [{ source: 'primary', type: 'MODIFIED', kind: 'v1/Pod', object: 'shop/web-1', resourceVersion: '11' }] });
    // Used up: the same version seen again (a relist) is queued as usual.
    expect(settleOwnWrite(t.settings, 'shop/web-1', pod('11'), modified)).toBe(false);
  });

  it('queues any other version and uses the entry up, as the reconcile would', () => {
    const t = intake();
    t.ownWrites.remember('shop/web-1', '11');
    expect(settleOwnWrite(t.settings, 'shop/web-1', pod('12'), modified)).toBe(false);
    expect(t.ownWrites.size).toBe(0);
    expect(t.counted()).toBe(0);
    expect(t.history.history(loop.id, 'shop/web-1')).toEqual([]);
  });

  it('settles the event that waited while the reconcile was in flight, when it is the one event since and still cached', () => {
    const t = intake();
    t.ownWrites.remember('shop/web-1', '11');
    const arrived = watchEvent('primary', 'MODIFIED', pod('11'), 1_000);
    expect(settleWaitingOwnWrite(t.settings, 'shop/web-1', modified, waiting(arrived), pod('11'))).toBe(true);
    expect(t.counted()).toBe(1);
    expect(t.history.history(loop.id, 'shop/web-1')[0]).toMatchObject({ outcome: OWN_WRITE_SEEN, triggers: [arrived] });
  });

  it('leaves to the queue a waiting child event, more than one event, or a cache that moved past the event (the entry untouched)', () => {
    const t = intake();
    t.ownWrites.remember('shop/web-1', '11');
    expect(settleWaitingOwnWrite(t.settings, 'shop/web-1', { type: 'CHILD' } as Trigger, waiting(watchEvent('child', 'MODIFIED', pod('3'))), pod('11'))).toBe(false);
    expect(settleWaitingOwnWrite(t.settings, 'shop/web-1', modified, waiting(watchEvent('primary', 'MODIFIED', pod('10')), watchEvent('primary', 'MODIFIED', pod('11'))), pod('11'))).toBe(false);
    expect(settleWaitingOwnWrite(t.settings, 'shop/web-1', modified, waiting(watchEvent('primary', 'MODIFIED', pod('11'))), pod('12'))).toBe(false);
    expect(t.ownWrites.consume('shop/web-1', '11')).toBe(true);
  });

  it('does not touch the entry of a key the queue holds: its reconcile consumes it', () => {
    const t = intake(true);
    t.ownWrites.remember('shop/web-1', '11');
    expect(settleOwnWrite(t.settings, 'shop/web-1', pod('11'), modified)).toBe(false);
    expect(t.ownWrites.consume('shop/web-1', '11')).toBe(true);
  });
});
