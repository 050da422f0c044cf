import { describe, expect, it } from 'vitest';
import type { ResourceInfo } from './resource-paths.ts';
import { accessChecks, describeCheck } from './access-review.ts';

const pods: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const podsets: ResourceInfo = { group: 'app.kubeloop.dev', version: 'v1alpha1', apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', plural: 'podsets', namespaced: true };
const nodes: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false };

describe('accessChecks', () => {
  it('asks for list and watch of every received kind cluster-wide when the Loop names no namespaces', () => {
    expect(accessChecks([podsets, pods], undefined).map(describeCheck)).toEqual([
      'list podsets.app.kubeloop.dev cluster-wide',
      'watch podsets.app.kubeloop.dev cluster-wide',
      'list pods cluster-wide',
      'watch pods cluster-wide',
    ]);
  });
  it('asks per namespace for namespaced kinds, cluster-wide for cluster-scoped ones, once per check', () => {
    const checks = accessChecks([pods, nodes, pods], new Set(['b', 'a']));
    expect(checks.map(describeCheck)).toEqual([
      'list pods in namespace a',
      'watch pods in namespace a',
      'list pods in namespace b',
      'watch pods in namespace b',
      'list nodes cluster-wide',
      'watch nodes cluster-wide',
    ]);
  });
});
