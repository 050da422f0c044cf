import { describe, expect, it } from 'vitest';
import { startThrottledMessage, TenantStartLimit } from './tenant-start-limit.ts';

describe('TenantStartLimit', () => {
  it('lets a tenant start its burst at once, then one start per 1/qps, each Loop holding its reserved place', () => {
    let now = 0;
    const limit = new TenantStartLimit({ qps: 2, burst: 3 }, () => now);
    expect(['a', 'b', 'c'].map((id) => limit.reserve('team-a', `team-a/${id}`))).toEqual([0, 0, 0]);
    expect(limit.reserve('team-a', 'team-a/d')).toBe(500);
    expect(limit.reserve('team-a', 'team-a/e')).toBe(1000);
    // Asked again early, a Loop keeps its place rather than taking a second token.
    now = 200;
    expect(limit.reserve('team-a', 'team-a/d')).toBe(300);
    now = 500;
    expect(limit.reserve('team-a', 'team-a/d')).toBe(0);
    now = 1000;
    expect(limit.reserve('team-a', 'team-a/e')).toBe(0);
  });

  it('keeps tenants apart: one tenant churning does not delay another', () => {
    const limit = new TenantStartLimit({ qps: 2, burst: 20 }, () => 0);
    for (let i = 0; i < 100; i += 1) limit.reserve('team-a', `team-a/l${i % 5}-${i}`);
    expect(limit.reserve('team-b', 'team-b/x')).toBe(0);
  });

  it('does not refund a forgotten Loop: deleting and creating again spends another start', () => {
    const limit = new TenantStartLimit({ qps: 1, burst: 1 }, () => 0);
    expect(limit.reserve('team-a', 'team-a/x')).toBe(0);
    expect(limit.reserve('team-a', 'team-a/x')).toBe(1000);
    limit.forget('team-a/x');
    expect(limit.reserve('team-a', 'team-a/x')).toBe(2000);
  });

  it('limits nothing at qps 0', () => {
    const limit = new TenantStartLimit({ qps: 0, burst: 1 }, () => 0);
    expect([1, 2, 3].map(() => limit.reserve('team-a', 'team-a/x'))).toEqual([0, 0, 0]);
  });

  it('names the flags and the wait in its message', () => {
    expect(startThrottledMessage('team-a', { qps: 2, burst: 20 }, 1500)).toContain('2/s, 20 at once: --tenant-loop-starts-qps, --tenant-loop-starts-burst); this one starts in about 2 s');
  });
});
