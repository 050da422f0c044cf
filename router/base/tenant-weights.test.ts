import { describe, expect, it } from 'vitest';
import { CLUSTER_TENANT } from '../../api/tenant.ts';
import { parseTenantWeights, TenantWeights, tenantOf, tenantOfLoopId } from './tenant-weights.ts';

describe('tenant weights', () => {
  it('charges a namespaced Loop to its namespace and every ClusterLoop to the cluster tenant', () => {
    expect(tenantOf({ namespace: 'team-a' })).toBe('team-a');
    expect(tenantOf({ namespace: undefined })).toBe(CLUSTER_TENANT);
    expect(tenantOfLoopId('team-a/podset')).toBe('team-a');
    expect(tenantOfLoopId('podset')).toBe(CLUSTER_TENANT);
  });

  it('keeps a namespace named "cluster" apart from the ClusterLoops: the cluster key is no namespace name', () => {
    expect(tenantOf({ namespace: 'cluster' })).toBe('cluster');
    expect(tenantOfLoopId('cluster/x')).not.toBe(tenantOfLoopId('x'));
    // A namespace name is a DNS label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
    expect(CLUSTER_TENANT).not.toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    const weights = new TenantWeights(parseTenantWeights(`${CLUSTER_TENANT}=4`));
    weights.setLabel('cluster', '2');
    expect(weights.weightOf(CLUSTER_TENANT)).toBe(4);
    expect(weights.weightOf('cluster')).toBe(2);
  });

  it('parses a weight map and refuses an entry that is not <namespace>=<positive number>', () => {
    expect(parseTenantWeights(' team-a=4 ,team-b=0.5,,')).toEqual(new Map([['team-a', 4], ['team-b', 0.5]]));
    expect(parseTenantWeights(undefined).size).toBe(0);
    for (const bad of ['team-a', '=3', 'team-a=0', 'team-a=-2', 'team-a=x', 'team-a=Infinity']) {
      expect(() => parseTenantWeights(bad)).toThrow(`tenant weight "${bad}"`);
    }
    // Clamped, so no tenant's share rounds every other one to nothing.
    expect(parseTenantWeights('a=1e9,b=1e-9')).toEqual(new Map([['a', 1000], ['b', 0.01]]));
  });

  it('takes the configured weight over a Namespace label, the label over the default, and ignores a bad label', () => {
    const weights = new TenantWeights(new Map([['team-a', 4]]));
    weights.setLabel('team-a', '10');
    weights.setLabel('team-b', '3');
    weights.setLabel('team-c', 'lots');
    expect(weights.weightOf('team-a')).toBe(4);
    expect(weights.weightOf('team-b')).toBe(3);
    expect(weights.weightOf('team-c')).toBe(1);
    weights.setLabel('team-b', undefined);
    expect(weights.weightOf('team-b')).toBe(1);
  });
});
