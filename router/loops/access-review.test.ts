import { describe, expect, it } from 'vitest';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { accessChecks, describeCheck, loopAccessChecks } from './access-review.ts';
import { parseRelated } from '../base/related-relation.ts';

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

describe('loopAccessChecks', () => {
  const configMaps: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
  const byKind: Record<string, ResourceInfo> = { Pod: pods, PodSet: podsets, Node: nodes, ConfigMap: configMaps };
  it('adds each related kind where its entry looks: the Loop namespaces, a named one, or cluster-wide', async () => {
    const related = parseRelated([
      { name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'x' } },
      { name: 'shared', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shared', nameFrom: { annotation: 'y' } },
      { name: 'nodes', apiVersion: 'v1', kind: 'Node' },
    ]);
    const checks = await loopAccessChecks({ for: { apiVersion: 'v1', kind: 'Pod' }, owns: [], namespaces: new Set(['a']), related }, async (ref) => byKind[ref.kind]!);
    expect(checks.map(describeCheck)).toEqual([
      'list pods in namespace a',
      'watch pods in namespace a',
      'list configmaps in namespace a',
      'watch configmaps in namespace a',
      'list configmaps in namespace shared',
      'watch configmaps in namespace shared',
      'list nodes cluster-wide',
      'watch nodes cluster-wide',
    ]);
  });
});
