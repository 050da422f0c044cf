// charts/kubeloop's signed calls: a generated Standard Webhooks key per function it runs, mounted into the
// function (Deployment and Knative), named by the Loop or AdmissionHook, readable by that Loop's
// ServiceAccount alone (an admission function's by the webhook gateway alone); signing.enabled=false and
// url functions get none unless they name a Secret. chart-install.test.ts checks upgrades keep the key.
import { describe, expect, inject, it } from 'vitest';
import { byKind, one, renderChart, type Manifest } from './chart-render.ts';
import { FUNCTIONS as SEEDS } from './chart-fixtures.ts';

const helmBinary = inject('clusterBinaries').helm;
const namespace = 'platform';
/** The admission function the chart runs (with the webhook, by default). */
const ADMISSION = 'watcher-sidecar';
const MOUNT = '/var/run/kubeloop/signing';

interface PodSpec {
  containers: Array<{ args: string[]; volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }> }>;
  volumes?: Array<{ name: string; secret?: { secretName: string; items?: Array<{ key: string; path: string }> } }>;
}
type Loop = Manifest & { spec: { function: { url: string; signingSecretRef?: { name: string; namespace: string; key: string } }; serviceAccount: { name: string } } };

const loopOf = (manifests: Manifest[], fn: string) => one(manifests, 'ClusterLoop', `kubeloop-${fn}`) as Loop;
const podSpecOf = (workload: Manifest): PodSpec => (workload as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const signingSecrets = (manifests: Manifest[]) => byKind(manifests, 'Secret').filter((s) => s.metadata.name.endsWith('-signing'));

/** The decoded key of a generated Secret: whsec_ + base64 of the raw key bytes. */
function keyBytes(secret: Manifest): Buffer {
  const text = Buffer.from((secret as unknown as { data: Record<string, string> }).data.secret ?? '', 'base64').toString('utf8');
  expect(text).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
  return Buffer.from(text.slice('whsec_'.length), 'base64');
}

/** The function's pod reads exactly the Loop's Secret key through a read-only mount named by --signing-secret-file. */
function expectMounted(spec: PodSpec, secretName: string, key: string): void {
  const container = spec.containers[0]!;
  expect(container.args).toContain(`--signing-secret-file=${MOUNT}/${key}`);
  expect(container.volumeMounts).toEqual([{ name: 'signing-key', mountPath: MOUNT, readOnly: true }]);
  expect(spec.volumes).toEqual([{ name: 'signing-key', secret: { secretName, items: [{ key, path: key }] } }]);
}

describe('helm template signs every function it runs by default', () => {
  it('generates one Secret per function holding whsec_ + 32 random bytes, a different key each', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace });
    const secrets = signingSecrets(manifests);
    expect(secrets.map((s) => s.metadata.name).sort()).toEqual([...SEEDS, ADMISSION].map((fn) => `kubeloop-${fn}-signing`).sort());
    const keys = secrets.map(keyBytes);
    for (const key of keys) expect(key).toHaveLength(32);
    expect(new Set(keys.map((k) => k.toString('hex'))).size).toBe(keys.length);
    for (const secret of secrets) expect(secret.metadata.namespace).toBe(namespace);
  });

  it('renders a new key each time without a cluster to look the old one up in', async () => {
    const [first, second] = await Promise.all([renderChart(helmBinary, { namespace }), renderChart(helmBinary, { namespace })]);
    const key = (m: Manifest[]) => keyBytes(one(m, 'Secret', 'kubeloop-podset-signing')).toString('hex');
    expect(key(first.manifests)).not.toBe(key(second.manifests));
  });

  it.each([['deployment', 'Deployment', 'apps/v1'], ['knative', 'Service', 'serving.knative.dev/v1']])(
    'mounts the key into each %s function, passes --signing-secret-file, and names it in the Loop',
    async (runtime, kind, apiVersion) => {
      const { manifests } = await renderChart(helmBinary, { namespace, values: { functionDefaults: { runtime } } });
      for (const fn of SEEDS) {
        const workload = manifests.find((m) => m.kind === kind && m.apiVersion === apiVersion && m.metadata.name === `kubeloop-${fn}`)!;
        expectMounted(podSpecOf(workload), `kubeloop-${fn}-signing`, 'secret');
        expect(loopOf(manifests, fn).spec.function.signingSecretRef).toEqual({ name: `kubeloop-${fn}-signing`, namespace, key: 'secret' });
      }
    },
  );

  it('lets each Loop\'s ServiceAccount get and watch its own key and no other', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace });
    for (const fn of SEEDS) {
      const role = one(manifests, 'Role', `kubeloop-router-loop-${fn}-signing`) as Manifest & { rules: unknown[] };
      expect(role.metadata.namespace).toBe(namespace);
      expect(role.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: [`kubeloop-${fn}-signing`], verbs: ['get', 'list', 'watch'] }]);
      const binding = one(manifests, 'RoleBinding', `kubeloop-router-loop-${fn}-signing`) as Manifest & { roleRef: { name: string }; subjects: unknown[] };
      expect(binding.metadata.namespace).toBe(namespace);
      expect(binding.roleRef.name).toBe(role.metadata.name);
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: loopOf(manifests, fn).spec.serviceAccount.name, namespace }]);
    }
  });
});

describe('helm template signs the admission functions too', () => {
  it("mounts the key into the admission function, names it in its AdmissionHook, and lets only the gateway get it", async () => {
    const { manifests } = await renderChart(helmBinary, { namespace });
    const secret = `kubeloop-${ADMISSION}-signing`;
    expectMounted(podSpecOf(one(manifests, 'Deployment', `kubeloop-${ADMISSION}`)), secret, 'secret');
    const hook = one(manifests, 'ClusterAdmissionHook', `kubeloop-${ADMISSION}`) as Manifest & { spec: { function: { signingSecretRef?: unknown } } };
    expect(hook.spec.function.signingSecretRef).toEqual({ name: secret, namespace, key: 'secret' });
    const roles = byKind(manifests, 'Role').filter((r) => (r as unknown as { rules: Array<{ resourceNames?: string[] }> }).rules.some((rule) => rule.resourceNames?.includes(secret)));
    expect(roles.map((r) => r.metadata.name)).toEqual(['kubeloop-webhook-signing']);
    expect((roles[0] as unknown as { rules: unknown[] }).rules).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: [secret], verbs: ['get'] }]);
    const binding = one(manifests, 'RoleBinding', 'kubeloop-webhook-signing') as Manifest & { subjects: Array<{ name: string }> };
    expect(binding.subjects.map((s) => s.name)).toEqual(['kubeloop-webhook']);
  });
});

describe('helm template without generated keys', () => {
  const remote = { url: 'https://remote.example.com/reconcile', loop: { for: { apiVersion: 'v1', kind: 'ConfigMap' } } };

  it('renders no key, mount, flag, signingSecretRef or Secret rule with signing.enabled=false', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace, values: { signing: { enabled: false } } });
    expect(signingSecrets(manifests)).toEqual([]);
    // The admission policies still check the signingSecretRef a user writes on a Loop or hook (its namespace).
    expect(JSON.stringify(manifests.filter((m) => m.kind !== 'ValidatingAdmissionPolicy'))).not.toMatch(/signing/i);
    for (const fn of SEEDS) expect(loopOf(manifests, fn).spec.function.signingSecretRef).toBeUndefined();
  });

  it('signs a url function only with the Secret it names, and uses a named Secret instead of generating one', async () => {
    const functions = {
      remote,
      'remote-signed': { ...remote, signingSecret: { name: 'remote-key', key: 'whsec' } },
      podset: { signingSecret: { name: 'podset-key' } },
    };
    const { manifests } = await renderChart(helmBinary, { namespace, values: { functions } });
    expect(loopOf(manifests, 'remote').spec.function.signingSecretRef).toBeUndefined();
    expect(manifests.map((m) => `${m.kind}/${m.metadata.name}`)).not.toContain('Role/kubeloop-router-loop-remote-signing');
    expect(loopOf(manifests, 'remote-signed').spec.function.signingSecretRef).toEqual({ name: 'remote-key', namespace, key: 'whsec' });
    expect((one(manifests, 'Role', 'kubeloop-router-loop-remote-signed-signing') as unknown as { rules: Array<{ resourceNames: string[] }> }).rules[0]?.resourceNames).toEqual(['remote-key']);
    expect(loopOf(manifests, 'podset').spec.function.signingSecretRef).toEqual({ name: 'podset-key', namespace, key: 'secret' });
    expectMounted(podSpecOf(one(manifests, 'Deployment', 'kubeloop-podset')), 'podset-key', 'secret');
    // Named Secrets are the user's: the chart neither generates nor owns them.
    expect(signingSecrets(manifests).map((s) => s.metadata.name).sort()).toEqual(['kubeloop-at-signing', 'kubeloop-pod-name-label-signing', 'kubeloop-watcher-sidecar-signing', 'kubeloop-watcher-signing']);
    expect(byKind(manifests, 'Secret').map((s) => s.metadata.name)).not.toContain('podset-key');
  });
});
