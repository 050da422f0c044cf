// A sample ClusterLoop as a team's Loop: in the namespace, its own ServiceAccount and the ClusterRole's rules as a Role.
import { describe, expect, it } from 'vitest';
import { namespacedSampleLoop } from './namespaced-sample.ts';

describe('namespacedSampleLoop', () => {
  it('confines the Loop to the namespace, as a ServiceAccount there holding the same rules by a Role', () => {
    const rules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch'] }];
    const loop = {
      apiVersion: 'kubeloop.dev/v1alpha1',
      kind: 'ClusterLoop',
      metadata: { name: 'pod-name-label' },
      spec: { for: { apiVersion: 'v1', kind: 'Pod' }, namespaces: ['a', 'b'], serviceAccount: { namespace: 'kubeloop-system', name: 'loop-pnl' }, function: { url: 'http://127.0.0.1:1/' } },
    };
    const [account, role, binding, namespaced] = namespacedSampleLoop(loop, rules, 'soak');
    expect(account).toMatchObject({ kind: 'ServiceAccount', metadata: { name: 'loop-pnl', namespace: 'soak' } });
    expect(role).toMatchObject({ kind: 'Role', metadata: { name: 'loop-pnl', namespace: 'soak' }, rules });
    expect(binding).toMatchObject({ kind: 'RoleBinding', roleRef: { kind: 'Role', name: 'loop-pnl' }, subjects: [{ kind: 'ServiceAccount', name: 'loop-pnl', namespace: 'soak' }] });
    expect(namespaced).toEqual({
      apiVersion: 'kubeloop.dev/v1alpha1',
      kind: 'Loop',
      metadata: { name: 'pod-name-label', namespace: 'soak' },
      spec: { for: { apiVersion: 'v1', kind: 'Pod' }, serviceAccount: { name: 'loop-pnl' }, function: { url: 'http://127.0.0.1:1/' } },
    });
  });
});
