// charts/kubeloop's single values, rendered with the real helm: values.schema.json refusing bad ones by name, the
// Loop admission values reaching the policy and the router alike, and the history APIs (router and gateway)
// registered as aggregated APIs. chart.test.ts renders the whole chart under each value set.
import { describe, expect, inject, it } from 'vitest';
import { one, renderChart, templateWithValues, type Manifest } from './chart-render.ts';
import { RELEASE } from './chart-fixtures.ts';

const helmBinary = inject('clusterBinaries').helm;

describe('values.schema.json', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown function runtime', { functionDefaults: { runtime: 'lambda' } }, /\/functionDefaults\/runtime': value must be one of 'deployment', 'knative'/],
    ['an admission hook timeout above 30 s', { functions: { 'watcher-sidecar': { admissionHook: { timeoutSeconds: 31 } } } }, /\/admissionHook\/timeoutSeconds'/],
    ['an unknown certificate mode', { webhook: { certificates: { mode: 'vault' } } }, /\/webhook\/certificates\/mode': value must be one of 'self', 'cert-manager'/],
    ['a Loop function URL set by hand', { functions: { podset: { loop: { function: { url: 'http://x' } } } } }, /\/functions\/podset\/loop\/function': additional properties 'url' not allowed/],
    ['zero router replicas', { router: { replicas: 0 } }, /\/router\/replicas'/],
    ['an IP address as an allowed function host', { loopAdmission: { allowedHosts: ['169.254.169.254'] } }, /\/loopAdmission\/allowedHosts\/0'/],
    ['a requeue floor of zero', { router: { minRequeueSeconds: 0 } }, /\/router\/minRequeueSeconds'/],
    ['a negative Loop limit per tenant', { router: { maxLoopsPerTenant: -1 } }, /\/router\/maxLoopsPerTenant'/],
    ['a Loop start burst of zero', { router: { tenantLoopStarts: { burst: 0 } } }, /\/router\/tenantLoopStarts\/burst'/],
    ['a history share per tenant of zero', { router: { history: { objectsPerTenant: 0 } } }, /\/router\/history\/objectsPerTenant'/],
    ['running as root', { podSecurityContext: { runAsNonRoot: false } }, /\/podSecurityContext\/runAsNonRoot': value must be true/],
    ['a misspelt top-level key', { routr: { replicas: 2 } }, /additional properties 'routr' not allowed/],
  ];
  it.each(cases)('rejects %s, naming the setting', async (_what, values, message) => {
    const result = await templateWithValues(helmBinary, values);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });
});

describe('the Loop admission values', () => {
  it('reach the policy and the router alike (cluster domain, allowed hosts, bounds)', async () => {
    const values = { clusterDomain: 'corp.internal', loopAdmission: { allowedHosts: ['*.fns.example.org'] }, router: { minRequeueSeconds: 2, loopQps: 7, maxLoopsPerTenant: 20, tenantLoopStarts: { qps: 0.5, burst: 5 }, history: { objectsPerTenant: 300 } } };
    const { manifests } = await renderChart(helmBinary, { namespace: 'kl', values });
    const policy = one(manifests, 'ValidatingAdmissionPolicy', `${RELEASE}-loops`) as Manifest & { spec: { variables: Array<{ expression: string }>; validations: Array<{ expression: string }> } };
    const expressions = [...policy.spec.variables, ...policy.spec.validations].map((v) => v.expression).join('\n');
    // The CEL string holds an escaped regular expression: \\. is a literal dot.
    expect(expressions).toContain('\\\\.svc(\\\\.corp\\\\.internal)?$');
    expect(expressions).toContain('"kubernetes.default.svc.corp.internal"');
    expect(expressions).toContain('["*.fns.example.org"]');
    const router = one(manifests, 'Deployment', `${RELEASE}-router`) as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
    expect(router.spec.template.spec.containers[0]?.args).toEqual(
      expect.arrayContaining(['--cluster-domain=corp.internal', '--function-hosts=*.fns.example.org', '--min-requeue-seconds=2', '--loop-qps=7', '--max-loops-per-tenant=20', '--tenant-loop-starts-qps=0.5', '--tenant-loop-starts-burst=5', '--history-objects-per-tenant=300']),
    );
  });

  it('bind the policy to exactly the Loops the router runs (its --loop-selector), or to every Loop', async () => {
    const binding = async (values: Record<string, unknown>) => {
      const { manifests } = await renderChart(helmBinary, { namespace: 'kl', values });
      const router = one(manifests, 'Deployment', `${RELEASE}-router`) as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
      const selector = router.spec.template.spec.containers[0]?.args.find((a) => a.startsWith('--loop-selector='));
      const { spec } = one(manifests, 'ValidatingAdmissionPolicyBinding', `${RELEASE}-loops`) as Manifest & { spec: { matchResources?: { objectSelector?: { matchLabels?: Record<string, string> } } } };
      return { selector, matchLabels: spec.matchResources?.objectSelector?.matchLabels };
    };
    expect(await binding({})).toEqual({ selector: `--loop-selector=app.kubernetes.io/instance=${RELEASE}`, matchLabels: { 'app.kubernetes.io/instance': RELEASE } });
    expect(await binding({ router: { onlyReleaseLoops: false } })).toEqual({ selector: undefined, matchLabels: undefined });
  });
});

describe('the history API values', () => {
  it('register the router as the aggregated API history.kubeloop.dev, serving with the given certificate, reachable from the API server', async () => {
    const values = { router: { historyApi: { enabled: true, port: 9443, certificates: { mode: 'secret', secretName: 'my-tls', caBundle: 'PEM' } } } };
    const { manifests } = await renderChart(helmBinary, { namespace: 'kl', values });
    const apiService = one(manifests, 'APIService', 'v1alpha1.history.kubeloop.dev') as Manifest & { spec: { service: { namespace: string; name: string; port: number }; caBundle: string } };
    expect(apiService.spec.service).toEqual({ namespace: 'kl', name: `${RELEASE}-router-history`, port: 443 });
    expect(Buffer.from(apiService.spec.caBundle, 'base64').toString()).toBe('PEM');
    const router = one(manifests, 'Deployment', `${RELEASE}-router`) as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }>; volumes: Array<{ name: string; secret?: { secretName: string } }> } } } };
    expect(router.spec.template.spec.containers[0]?.args).toEqual(expect.arrayContaining(['--history-api-port=9443', '--history-tls-cert-file=/etc/kubeloop/history-tls/tls.crt']));
    expect(router.spec.template.spec.volumes).toContainEqual({ name: 'history-tls', secret: { secretName: 'my-tls' } });
    // The requestheader CA is read in kube-system; pods are looked up to forward to the replica with the history.
    expect(one(manifests, 'RoleBinding', `${RELEASE}-router-history-authentication-reader`)).toMatchObject({ metadata: { namespace: 'kube-system' }, roleRef: { name: 'extension-apiserver-authentication-reader' } });
    expect(one(manifests, 'Role', `${RELEASE}-router-history-peers`)).toMatchObject({ rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
    const policy = one(manifests, 'NetworkPolicy', `${RELEASE}-router`) as Manifest & { spec: { ingress: Array<{ ports: Array<{ port: number }> }> } };
    expect(policy.spec.ingress.map((rule) => rule.ports[0]?.port)).toEqual([8081, 9443]);
  });

  it('write the history files on a volume bounded by count x maxBytes, or on the volume given', async () => {
    type RouterPod = Manifest & { spec: { template: { spec: { containers: Array<{ args: string[]; volumeMounts: Array<{ name: string; mountPath: string }> }>; volumes: Array<{ name: string }> } } } };
    const routerOf = async (files: Record<string, unknown>) => (one((await renderChart(helmBinary, { namespace: 'kl', values: { router: { history: { files } } } })).manifests, 'Deployment', `${RELEASE}-router`) as RouterPod).spec.template.spec;
    const pod = await routerOf({ enabled: true, maxBytes: 1048576, count: 3 });
    expect(pod.containers[0]?.args).toEqual(expect.arrayContaining(['--history-dir=/var/lib/kubeloop/history', '--history-file-max-bytes=1048576', '--history-files=3']));
    expect(pod.containers[0]?.volumeMounts).toContainEqual({ name: 'history-files', mountPath: '/var/lib/kubeloop/history' });
    expect(pod.volumes).toContainEqual({ name: 'history-files', emptyDir: { sizeLimit: String(4 * 1048576) } });
    expect((await routerOf({ enabled: true, volume: { persistentVolumeClaim: { claimName: 'router-history' } } })).volumes).toContainEqual({ name: 'history-files', persistentVolumeClaim: { claimName: 'router-history' } });
    expect((await routerOf({ enabled: false })).containers[0]?.args.some((arg) => arg.startsWith('--history-dir'))).toBe(false);
    await expect(renderChart(helmBinary, { namespace: 'kl', values: { router: { history: { files: { enabled: true, count: 0 } } } } })).rejects.toThrow('minimum');
  });

  it('refuses the secret mode without its Secret and CA', async () => {
    await expect(renderChart(helmBinary, { namespace: 'kl', values: { router: { historyApi: { enabled: true, certificates: { mode: 'secret' } } } } })).rejects.toThrow('needs secretName and caBundle');
  });
});

describe('the admission history values', () => {
  it("register the gateway as the aggregated API admissions.kubeloop.dev, serving with the given certificate, reachable from the API server", async () => {
    const values = { webhook: { admissionHistory: { perHook: 20, api: { enabled: true, port: 9444, certificates: { mode: 'secret', secretName: 'my-tls', caBundle: 'PEM' } } } } };
    const { manifests } = await renderChart(helmBinary, { namespace: 'kl', values });
    const apiService = one(manifests, 'APIService', 'v1alpha1.admissions.kubeloop.dev') as Manifest & { spec: { service: { namespace: string; name: string; port: number }; caBundle: string } };
    expect(apiService.spec.service).toEqual({ namespace: 'kl', name: `${RELEASE}-webhook-admissions`, port: 443 });
    expect(Buffer.from(apiService.spec.caBundle, 'base64').toString()).toBe('PEM');
    const gateway = one(manifests, 'Deployment', `${RELEASE}-webhook`) as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }>; volumes: Array<{ name: string; secret?: { secretName: string } }> } } } };
    expect(gateway.spec.template.spec.containers[0]?.args).toEqual(expect.arrayContaining(['--admission-history-per-hook=20', '--admission-history-api-port=9444', '--admission-history-tls-cert-file=/etc/kubeloop/admissions-tls/tls.crt']));
    expect(gateway.spec.template.spec.volumes).toContainEqual({ name: 'admissions-tls', secret: { secretName: 'my-tls' } });
    expect(one(manifests, 'RoleBinding', `${RELEASE}-webhook-admissions-authentication-reader`)).toMatchObject({ metadata: { namespace: 'kube-system' }, roleRef: { name: 'extension-apiserver-authentication-reader' } });
    expect(one(manifests, 'ClusterRole', `${RELEASE}-webhook-admissions-reader`)).toMatchObject({ rules: [{ apiGroups: ['admissions.kubeloop.dev'], resources: ['hookhistories'], verbs: ['get'] }] });
    const policy = one(manifests, 'NetworkPolicy', `${RELEASE}-webhook`) as Manifest & { spec: { ingress: Array<{ ports: Array<{ port: number }> }> } };
    expect(policy.spec.ingress[0]?.ports.map((p) => p.port)).toEqual([8443, 9444]);
    // Off by default: the recorder runs, its API is not served.
    const defaults = one((await renderChart(helmBinary, { namespace: 'kl', values: {} })).manifests, 'Deployment', `${RELEASE}-webhook`) as typeof gateway;
    expect(defaults.spec.template.spec.containers[0]?.args.some((arg) => arg.startsWith('--admission-history-api-port'))).toBe(false);
  });
});
