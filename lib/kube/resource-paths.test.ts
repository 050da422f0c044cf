import { describe, expect, it } from 'vitest';
import { parseResourceList } from './discovery.ts';
import { collectionPath, objectPath, type ResourceInfo } from './resource-paths.ts';

const pods: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const loops: ResourceInfo = { group: 'kubeloop.dev', version: 'v1alpha1', apiVersion: 'kubeloop.dev/v1alpha1', kind: 'ClusterLoop', plural: 'clusterloops', namespaced: false };

describe('resource paths', () => {
  it('builds core, group, namespaced and cluster-scoped paths', () => {
    expect(collectionPath(pods)).toBe('/api/v1/pods');
    expect(collectionPath(pods, 'ns')).toBe('/api/v1/namespaces/ns/pods');
    expect(objectPath(pods, 'p', 'ns', 'status')).toBe('/api/v1/namespaces/ns/pods/p/status');
    expect(objectPath(loops, 'l', 'ignored')).toBe('/apis/kubeloop.dev/v1alpha1/clusterloops/l');
  });
  it('refuses a namespaced object path without a namespace', () => {
    expect(() => objectPath(pods, 'p')).toThrow('namespace is required');
  });
});

describe('parseResourceList', () => {
  it('maps kinds to plurals and skips subresources', () => {
    const kinds = parseResourceList(
      { resources: [ { name: 'pods', kind: 'Pod', namespaced: true }, { name: 'pods/status', kind: 'Pod', namespaced: true } ] },
      '',
      'v1',
    );
    expect(kinds.get('Pod')).toEqual(pods);
    expect(kinds.size).toBe(1);
  });
});
