// The flags that name one Loop or hook in either scope, and the identity and path each gets.
import { describe, expect, it } from 'vitest';
import { identityOf, kubectlGet, readTarget, scopedPath } from './scoped-names.ts';

describe('readTarget', () => {
  it('reads a namespaced Loop or hook from --loop/--hook with -n, a cluster one from --cluster-loop/--cluster-hook', () => {
    expect(readTarget({ loop: 'web', namespace: 'team-a' })).toEqual({ kind: 'loop', name: 'web', namespace: 'team-a' });
    expect(readTarget({ 'cluster-loop': 'web' })).toEqual({ kind: 'loop', name: 'web' });
    expect(readTarget({ hook: 'require-team', namespace: 'team-a' })).toEqual({ kind: 'hook', name: 'require-team', namespace: 'team-a' });
    expect(readTarget({ 'cluster-hook': 'require-team' })).toEqual({ kind: 'hook', name: 'require-team' });
  });

  it('asks for -n with a namespaced kind instead of guessing one, and says which flag names the cluster kind', () => {
    expect(readTarget({ loop: 'web' })).toBe('--loop web names a namespaced Loop: add -n NAMESPACE (or --cluster-loop web for a ClusterLoop)');
    expect(readTarget({ hook: 'h' })).toBe('--hook h names a namespaced AdmissionHook: add -n NAMESPACE (or --cluster-hook h for a ClusterAdmissionHook)');
  });

  it('refuses -n with a cluster-scoped kind, none or two targets, and bad names', () => {
    expect(readTarget({ 'cluster-loop': 'web', namespace: 'team-a' })).toMatch(/--cluster-loop names a cluster-scoped ClusterLoop, which has no namespace: drop -n, or use --loop web -n team-a/);
    expect(readTarget({})).toMatch(/^give one of --loop NAME -n NAMESPACE, --cluster-loop NAME/);
    expect(readTarget({ loop: 'a', hook: 'b', namespace: 'x' })).toMatch(/^give one of/);
    expect(readTarget({ loop: 'Web', namespace: 'team-a' })).toBe('--loop: "Web" is not an object name');
    expect(readTarget({ loop: 'web', namespace: 'Team_A' })).toBe('-n: "Team_A" is not a namespace name');
  });
});

describe('identity and path', () => {
  it('keys a namespaced object <namespace>/<name> and a cluster one <name>, under the plural of its scope', () => {
    expect(identityOf({ name: 'web', namespace: 'team-a' })).toBe('team-a/web');
    expect(identityOf({ name: 'web' })).toBe('web');
    expect(scopedPath({ kind: 'loop', name: 'web', namespace: 'team-a' })).toBe('/apis/kubeloop.dev/v1alpha1/namespaces/team-a/loops/web');
    expect(scopedPath({ kind: 'loop', name: 'web' })).toBe('/apis/kubeloop.dev/v1alpha1/clusterloops/web');
    expect(scopedPath({ kind: 'hook', name: 'h', namespace: 'team-a' })).toBe('/apis/kubeloop.dev/v1alpha1/namespaces/team-a/admissionhooks/h');
    expect(scopedPath({ kind: 'hook', name: 'h' })).toBe('/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks/h');
    expect(kubectlGet({ kind: 'hook', name: 'h', namespace: 'team-a' })).toBe('kubectl get admissionhooks.kubeloop.dev -n team-a');
    expect(kubectlGet({ kind: 'loop', name: 'web' })).toBe('kubectl get clusterloops.kubeloop.dev');
  });
});
