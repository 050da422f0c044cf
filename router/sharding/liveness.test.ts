import { describe, expect, it } from 'vitest';
import { LivenessTracker, type MemberLeaseRecord } from './liveness.ts';

const lease = (name: string, renewal: string, extra: Partial<MemberLeaseRecord> = {}): MemberLeaseRecord => ({ name, holder: name, renewal, durationMs: 4000, ack: undefined, ...extra });

describe('LivenessTracker', () => {
  it('counts a Lease seen for the first time as live, whatever its timestamps say', () => {
    expect(new LivenessTracker().update([lease('a', 'r1')], 1000).live).toEqual(['a']);
  });

  it('expires a Lease left unchanged for longer than its duration, by this member\'s clock', () => {
    const t = new LivenessTracker();
    t.update([lease('a', 'r1'), lease('b', 'r1')], 0);
    expect(t.update([lease('a', 'r2'), lease('b', 'r1')], 3000).live).toEqual(['a', 'b']);
    expect(t.update([lease('a', 'r3'), lease('b', 'r1')], 4001).live).toEqual(['a']);
    // Renewed again: live at once.
    expect(t.update([lease('a', 'r3'), lease('b', 'r2')], 5000).live).toEqual(['a', 'b']);
  });

  it('drops released Leases and reports each live member\'s acknowledged view', () => {
    const { live, acks } = new LivenessTracker().update([lease('a', 'r1', { ack: 'v1' }), lease('b', 'r1', { holder: '' }), lease('c', 'r1')], 0);
    expect(live).toEqual(['a', 'c']);
    expect([...acks]).toEqual([['a', 'v1']]);
  });

  it('forgets a deleted Lease, so one created again under the same name starts fresh', () => {
    const t = new LivenessTracker();
    t.update([lease('a', 'r1')], 0);
    t.update([], 1000);
    expect(t.update([lease('a', 'r1')], 9000).live).toEqual(['a']);
  });
});
