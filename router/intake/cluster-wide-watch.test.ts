import { describe, expect, it } from 'vitest';
import { optedIn, parseClusterWideWatches } from './cluster-wide-watch.ts';

describe('parseClusterWideWatches', () => {
  it('reads resource[.group] entries as RBAC names them, once each', () => {
    expect(parseClusterWideWatches(' configmaps, deployments.apps,configmaps,widgets.example.com ', '--cluster-wide-watch')).toEqual([
      { resource: 'configmaps', group: '' },
      { resource: 'deployments', group: 'apps' },
      { resource: 'widgets', group: 'example.com' },
    ]);
    expect(parseClusterWideWatches('', '--cluster-wide-watch')).toEqual([]);
  });
  it('names the setting and the entry it cannot read', () => {
    expect(() => parseClusterWideWatches('configmaps,ConfigMap', 'KUBELOOP_CLUSTER_WIDE_WATCH')).toThrow('KUBELOOP_CLUSTER_WIDE_WATCH: "ConfigMap" is not a resource[.group]');
    expect(() => parseClusterWideWatches('deployments.', '--cluster-wide-watch')).toThrow('"deployments."');
    expect(() => parseClusterWideWatches('*', '--cluster-wide-watch')).toThrow('"*"');
  });
});

describe('optedIn', () => {
  const kinds = parseClusterWideWatches('configmaps,deployments.apps', 'x');
  it('matches on plural and group, not on the plural alone', () => {
    expect(optedIn(kinds, { plural: 'configmaps', group: '' })).toBe(true);
    expect(optedIn(kinds, { plural: 'deployments', group: 'apps' })).toBe(true);
    expect(optedIn(kinds, { plural: 'deployments', group: 'example.com' })).toBe(false);
    expect(optedIn(kinds, { plural: 'secrets', group: '' })).toBe(false);
  });
});
