import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../../lib/observability/metrics.ts';
import { FairScheduler } from './fair-scheduler.ts';
import { OTHER_LABEL } from '../../lib/observability/bounded-label.ts';
import { MonotonicSums, registerTenantMetrics, tenantLabels } from './tenant-metrics.ts';
import { CLUSTER_TENANT } from '../../api/tenant.ts';

describe('tenant metrics', () => {
  it('labels at most N tenants (cluster always among them) and the rest as other, for good', () => {
    const labels = tenantLabels(3);
    expect(['a', 'b', 'c', 'a', CLUSTER_TENANT].map((t) => labels.of(t))).toEqual(['a', 'b', OTHER_LABEL, 'a', '_cluster']);
  });

  it('keeps a summed counter monotonic when a tenant goes away and comes back from zero', () => {
    const sums = new MonotonicSums();
    expect(sums.update([{ tenant: 'x', label: 'other', value: 5 }, { tenant: 'y', label: 'other', value: 2 }]).get('other')).toBe(7);
    expect(sums.update([{ tenant: 'y', label: 'other', value: 3 }]).get('other')).toBe(8);
    expect(sums.update([{ tenant: 'y', label: 'other', value: 3 }, { tenant: 'x', label: 'other', value: 1 }]).get('other')).toBe(9);
  });

  it('exposes calls in flight and waiting time per tenant with a bounded label set', async () => {
    const registry = createMetricsRegistry();
    let clock = 0;
    const scheduler = new FairScheduler({ capacity: 1, weightOf: () => 1, reserveFraction: 0, now: () => clock });
    registerTenantMetrics(registry, { scheduler, weightOf: () => 1, maxLabelledTenants: 2 });
    const flows = ['team-a', 'team-b', 'team-c'].map((tenant) => {
      let waiting = 1;
      const handle = scheduler.register({ tenant, id: `${tenant}/l`, start: () => (waiting > 0 ? (waiting -= 1, true) : false), wantsMore: () => waiting > 0 });
      handle.ready();
      return handle;
    });
    clock = 2000;
    const text = await registry.metrics();
    expect(text).toContain('kubeloop_tenant_calls_in_flight{tenant="team-a"} 1');
    expect(text).toContain('kubeloop_tenant_throttled_seconds_total{tenant="other",budget="calls"} 4');
    expect(text).not.toContain('team-b');
    expect(text).toContain('kubeloop_router_calls_in_flight_limit 1');
    expect(flows).toHaveLength(3);
  });
});
