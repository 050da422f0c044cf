import { describe, expect, it } from 'vitest';
import { describeCheck } from '../../lib/kube/access-review.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { parseLoop } from '../base/loop-spec.ts';
import { parseRelated } from '../base/related-relation.ts';
import { affectedLoops, loopAccessChecks, loopRbacNamespaces, reviewOrder } from './loop-access.ts';

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

describe('loopRbacNamespaces', () => {
  it('names the Loop namespaces and each related entry\'s named or primary namespace, never "all"', () => {
    const related = parseRelated([
      { name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'x' } },
      { name: 'shared', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shared', nameFrom: { annotation: 'y' } },
      { name: 'everywhere', apiVersion: 'v1', kind: 'ConfigMap', namespace: '*' },
    ]);
    expect([...loopRbacNamespaces({ namespaces: new Set(['a']), related })].sort()).toEqual(['a', 'shared']);
    // A ClusterLoop over every namespace checks cluster-wide: only ClusterRoleBindings grant that.
    expect([...loopRbacNamespaces({ namespaces: undefined, related })]).toEqual(['shared']);
  });
});

describe('affectedLoops', () => {
  const loops = new Map<string, ReadonlySet<string>>([
    ['team-a/one', new Set(['team-a'])],
    ['team-a/two', new Set(['team-a'])],
    ['team-b/one', new Set(['team-b', 'shared'])],
    ['cluster-wide', new Set<string>()],
  ]);
  it('reviews the Loops whose checks look in a namespace whose Roles or RoleBindings changed', () => {
    expect(affectedLoops({ cluster: false, namespaces: new Set(['team-a']) }, loops)).toEqual(['team-a/one', 'team-a/two']);
    // A Role in a namespace a related entry reads concerns that Loop too.
    expect(affectedLoops({ cluster: false, namespaces: new Set(['shared']) }, loops)).toEqual(['team-b/one']);
    expect(affectedLoops({ cluster: false, namespaces: new Set(['team-c']) }, loops)).toEqual([]);
  });
  it('reviews every Loop, a namespace at a time in turn, for a ClusterRole or ClusterRoleBinding', () => {
    expect(affectedLoops({ cluster: true, namespaces: new Set() }, loops)).toEqual(['team-a/one', 'team-b/one', 'cluster-wide', 'team-a/two']);
  });
});
