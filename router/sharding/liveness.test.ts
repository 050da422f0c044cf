import { describe, expect, it } from 'vitest';
import { LivenessTracker, type MemberLeaseRecord } from './liveness.ts';
import { leaseRecord } from './member-lease.ts';

const lease = (name: string, renewal: string, extra: Partial<MemberLeaseRecord> = {}): MemberLeaseRecord => ({ name, holder: name, renewal, ack: undefined, ...extra });

describe('LivenessTracker', () => {
  it('counts a Lease seen for the first time as live, whatever its timestamps say', () => {
    expect(new LivenessTracker(4000).update([lease('a', 'r1')], 1000).live).toEqual(['a']);
  });

  it('expires a Lease left unchanged for longer than its duration, by this member\'s clock', () => {
    const t = new LivenessTracker(4000);
    t.update([lease('a', 'r1'), lease('b', 'r1')], 0);
    expect(t.update([lease('a', 'r2'), lease('b', 'r1')], 3000).live).toEqual(['a', 'b']);
    expect(t.update([lease('a', 'r3'), lease('b', 'r1')], 4001).live).toEqual(['a']);
    // Renewed again: live at once.
    expect(t.update([lease('a', 'r3'), lease('b', 'r2')], 5000).live).toEqual(['a', 'b']);
  });

  it('drops released Leases and reports each live member\'s acknowledged view', () => {
    const { live, acks } = new LivenessTracker(4000).update([lease('a', 'r1', { ack: 'v1' }), lease('b', 'r1', { holder: '' }), lease('c', 'r1')], 0);
    expect(live).toEqual(['a', 'c']);
    expect([...acks]).toEqual([['a', 'v1']]);
  });

  it('judges every Lease by this router\'s own duration: a Lease claiming a year expires like any other', () => {
    const t = new LivenessTracker(4000);
    const forged = leaseRecord({ metadata: { name: 'dead', resourceVersion: '7' }, spec: { holderIdentity: 'dead', leaseDurationSeconds: 365 * 24 * 3600, renewTime: new Date(0) } });
    t.update([forged, lease('a', 'r1')], 0);
    expect(t.update([forged, lease('a', 'r2')], 4001).live).toEqual(['a']);
  });

  it('forgets a deleted Lease, so one created again under the same name starts fresh', () => {
    const t = new LivenessTracker(4000);
    t.update([lease('a', 'r1')], 0);
    t.update([], 1000);
    expect(t.update([lease('a', 'r1')], 9000).live).toEqual(['a']);
  });
});
