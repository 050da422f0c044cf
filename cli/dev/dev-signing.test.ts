// The objects `kubeloop dev` creates to sign one Loop's calls.
import { describe, expect, it } from 'vitest';
import { signingManifests, type SignedLoop } from './dev-signing.ts';

const loop: SignedLoop = {
  apiVersion: 'kubeloop.dev/v1alpha1',
  kind: 'ClusterLoop',
  metadata: { name: 'podset' },
  spec: { serviceAccount: { namespace: 'kubeloop-system', name: 'kubeloop-loop-podset' }, function: { url: 'http://127.0.0.1:1/' } },
};

describe('signingManifests', () => {
  it('puts the key in a Secret beside the ServiceAccount, readable by that account alone, and names it in the Loop', () => {
    const { objects, loop: signed } = signingManifests(loop, 'whsec_abc');
    const [secret, role, binding] = objects;
    expect(secret).toMatchObject({ kind: 'Secret', metadata: { name: 'kubeloop-dev-podset-signing', namespace: 'kubeloop-system' }, stringData: { secret: 'whsec_abc' } });
    expect(role).toMatchObject({ kind: 'Role', metadata: { namespace: 'kubeloop-system' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['kubeloop-dev-podset-signing'], verbs: ['get', 'list', 'watch'] }] });
    expect(binding).toMatchObject({ kind: 'RoleBinding', subjects: [{ kind: 'ServiceAccount', name: 'kubeloop-loop-podset', namespace: 'kubeloop-system' }] });
    expect(signed.spec.function).toEqual({ url: 'http://127.0.0.1:1/', signingSecretRef: { name: 'kubeloop-dev-podset-signing', namespace: 'kubeloop-system', key: 'secret' } });
    expect(loop.spec.function).not.toHaveProperty('signingSecretRef');
  });

  it('refuses a Loop without a ServiceAccount, naming it', () => {
    expect(() => signingManifests({ ...loop, spec: { function: {} } }, 'whsec_abc')).toThrow(/Loop podset: spec.serviceAccount/);
  });
});
