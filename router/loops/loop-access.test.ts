import { describe, expect, it } from 'vitest';
import { describeCheck } from '../../lib/kube/access-review.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { parseRelated } from '../base/related-relation.ts';
import { loopAccessChecks, reviewOrder } from './loop-access.ts';

const pods: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true };
const podsets: ResourceInfo = { group: 'app.kubeloop.dev', version: 'v1alpha1', apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', plural: 'podsets', namespaced: true };
const nodes: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false };

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

  it('reviews a namespaced Loop in its own namespace only, so a Role there is enough', async () => {
    const config = parseLoop({
      kind: 'Loop',
      metadata: { name: 'podset', namespace: 'team-a' },
      spec: {
        for: { apiVersion: podsets.apiVersion, kind: 'PodSet' },
        owns: [{ apiVersion: 'v1', kind: 'Pod' }],
        related: [{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'x' } }],
        serviceAccount: { name: 'podset' } as never,
        function: { url: 'http://podset.team-a.svc:8080/' },
      },
    });
    const checks = await loopAccessChecks(config, async (ref) => byKind[ref.kind]!);
    expect(new Set(checks.map((c) => c.namespace))).toEqual(new Set(['team-a']));
    expect(checks.map(describeCheck)).toContain('list configmaps in namespace team-a');
  });
});

describe('reviewOrder', () => {
  it('takes one Loop of each namespace in turn, ClusterLoops as one more group, each namespace in its own order', () => {
    expect(reviewOrder(['a/1', 'a/2', 'a/3', 'b/1', 'cluster', 'c/1', 'c/2'])).toEqual(['a/1', 'b/1', 'cluster', 'c/1', 'a/2', 'c/2', 'a/3']);
    expect(reviewOrder([])).toEqual([]);
  });
});
