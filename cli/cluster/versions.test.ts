import { afterEach, describe, expect, it } from 'vitest';
import { apiserverVersionArgs, componentBinDir, hasShardedListAndWatch, KUBERNETES_RELEASES, kubernetesVersion, VERSIONS } from './versions.ts';

const saved = process.env.KUBELOOP_KUBERNETES_VERSION;
afterEach(() => {
  if (saved === undefined) delete process.env.KUBELOOP_KUBERNETES_VERSION;
  else process.env.KUBELOOP_KUBERNETES_VERSION = saved;
});

describe('Kubernetes versions', () => {
  it('runs the current release unless KUBELOOP_KUBERNETES_VERSION names another, each in its own cache dir', () => {
    delete process.env.KUBELOOP_KUBERNETES_VERSION;
    expect(kubernetesVersion()).toBe(KUBERNETES_RELEASES.current);
    expect(componentBinDir('kubernetes')).toMatch(new RegExp(`/bin/kubernetes-${KUBERNETES_RELEASES.current}$`));
    expect(componentBinDir('kubernetes', KUBERNETES_RELEASES.oldest)).toMatch(new RegExp(`/bin/kubernetes-${KUBERNETES_RELEASES.oldest}$`));
    process.env.KUBELOOP_KUBERNETES_VERSION = KUBERNETES_RELEASES.oldest;
    expect(VERSIONS.kubernetes).toBe(KUBERNETES_RELEASES.oldest);
    expect(componentBinDir('etcd')).toMatch(/\/bin\/etcd-v3\.6\.16$/);
  });

  it('refuses a version that is not v1.X.Y', () => {
    process.env.KUBELOOP_KUBERNETES_VERSION = '1.37';
    expect(() => kubernetesVersion()).toThrow('KUBELOOP_KUBERNETES_VERSION must look like v1.37.2, got "1.37"');
  });

  it('switches sharded list and watch on from 1.36 and the endpoint reconciler off from 1.37', () => {
    expect(apiserverVersionArgs('v1.35.8')).toEqual([]);
    expect(hasShardedListAndWatch('v1.35.8')).toBe(false);
    expect(apiserverVersionArgs('v1.36.3')).toEqual(['--feature-gates=ShardedListAndWatch=true']);
    expect(apiserverVersionArgs('v1.37.2')).toEqual(['--feature-gates=ShardedListAndWatch=true', '--endpoint-reconciler-type=none']);
  });
});
