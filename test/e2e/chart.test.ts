// charts/kubeloop: helm lint, helm template with several value sets (restricted pods, least-privilege RBAC,
// Loop URLs following the runtime, the AdmissionHooks matching samples/admission-hooks), schema
// errors, every manifest server-side dry-run applied to the real control plane (Knative Serving's and
// cert-manager's CRDs installed for those variants), and a real helm install + uninstall that leaves nothing behind.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { chartCrdFiles } from '../../cli/chart-crds.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { eventually } from '../cluster/eventually.ts';
import { certManagerCrdFiles, knativeServingCrdFiles } from './go-module-crds.ts';
import { byKind, CHART_DIR, helm, one, parseManifests, renderChart, valuesFile, type Manifest } from './chart-render.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';
import { assertRestrictedPod, podSpecsOf, type PodSpecLike } from './pod-security.ts';

const run = promisify(execFile);

const FUNCTIONS = ['at', 'pod-name-label', 'podset', 'watcher'] as const;
/** Admission functions: an AdmissionHook each instead of a Loop. */
const ADMISSION_FUNCTIONS = ['watcher-sidecar'] as const;
const RELEASE = 'kubeloop';

/** Value sets every rendering test runs with. */
const VALUE_SETS: Record<string, Record<string, unknown>> = {
  defaults: {},
  knative: { functionDefaults: { runtime: 'knative' } },
  'cert-manager': { webhook: { certificates: { mode: 'cert-manager' } }, router: { historyApi: { enabled: true }, history: { files: { enabled: true } } } },
  'mixed runtimes, namespaced loops': {
    functions: {
      // Namespaces that exist in any cluster: a Loop's RoleBindings are created in them.
      podset: { runtime: 'knative', loop: { namespaces: ['default', 'kube-public'] } },
      watcher: { enabled: false },
    },
  },
  minimal: {
    router: { replicas: 1, leaderElection: { enabled: false } },
    webhook: { enabled: false },
    networkPolicy: { enabled: false },
    functions: { podset: { enabled: false }, watcher: { enabled: false }, at: { enabled: false } },
  },
};

interface LoopManifest extends Manifest {
  spec: {
    for: { apiVersion: string; kind: string };
    owns?: Array<{ apiVersion: string; kind: string }>;
    namespaces?: string[];
    function: { url: string; signingSecretRef?: { name: string; namespace: string; key: string } };
    serviceAccount?: { namespace: string; name: string };
  };
}

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

function rulesOf(manifest: Manifest): PolicyRule[] {
  return (manifest as unknown as { rules?: PolicyRule[] }).rules ?? [];
}

function subjectsOf(manifest: Manifest): Array<{ kind: string; name: string; namespace?: string }> {
  return (manifest as unknown as { subjects?: Array<{ kind: string; name: string; namespace?: string }> }).subjects ?? [];
}

function plural(kind: string): string {
  const lower = kind.toLowerCase();
  return /(s|x|ch|sh)$/.test(lower) ? `${lower}es` : `${lower}s`;
}

function group(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}

// Rendering needs only helm; the control-plane tests below set up their own namespace.
const helmBinary = inject('clusterBinaries').helm;

describe('helm lint', () => {
  it.each(Object.entries(VALUE_SETS))('passes with the %s values', async (_name, values) => {
    const file = await valuesFile(values);
    try {
      const result = await helm(helmBinary, ['lint', CHART_DIR, '--strict', '--kube-version', '1.35.0', ...file.args]);
      expect(result.stderr + result.stdout, 'helm lint output').toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
      expect(result.code).toBe(0);
    } finally {
      await file.cleanup();
    }
  });
});

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
    ['a history share per tenant of zero', { router: { history: { objectsPerTenant: 0 } } }, /\/router\/history\/objectsPerTenant'/],
    ['running as root', { podSecurityContext: { runAsNonRoot: false } }, /\/podSecurityContext\/runAsNonRoot': value must be true/],
    ['a misspelt top-level key', { routr: { replicas: 2 } }, /additional properties 'routr' not allowed/],
  ];
  it.each(cases)('rejects %s, naming the setting', async (_what, values, message) => {
    const file = await valuesFile(values);
    try {
      const result = await helm(helmBinary, ['template', RELEASE, CHART_DIR, '--kube-version', '1.35.0', ...file.args]);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message);
    } finally {
      await file.cleanup();
    }
  });
});

describe('the Loop admission values', () => {
  it('reach the policy and the router alike (cluster domain, allowed hosts, bounds)', async () => {
    const values = { clusterDomain: 'corp.internal', loopAdmission: { allowedHosts: ['*.fns.example.org'] }, router: { minRequeueSeconds: 2, loopQps: 7, maxLoopsPerTenant: 20, history: { objectsPerTenant: 300 } } };
    const { manifests } = await renderChart(helmBinary, { namespace: 'kl', values });
    const policy = one(manifests, 'ValidatingAdmissionPolicy', `${RELEASE}-loops`) as Manifest & { spec: { variables: Array<{ expression: string }>; validations: Array<{ expression: string }> } };
    const expressions = [...policy.spec.variables, ...policy.spec.validations].map((v) => v.expression).join('\n');
    // The CEL string holds an escaped regular expression: \\. is a literal dot.
    expect(expressions).toContain('\\\\.svc(\\\\.corp\\\\.internal)?$');
    expect(expressions).toContain('"kubernetes.default.svc.corp.internal"');
    expect(expressions).toContain('["*.fns.example.org"]');
    const router = one(manifests, 'Deployment', `${RELEASE}-router`) as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
    expect(router.spec.template.spec.containers[0]?.args).toEqual(
      expect.arrayContaining(['--cluster-domain=corp.internal', '--function-hosts=*.fns.example.org', '--min-requeue-seconds=2', '--loop-qps=7', '--max-loops-per-tenant=20', '--history-objects-per-tenant=300']),
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

describe.each(Object.entries(VALUE_SETS))('helm template with the %s values', (_name, values) => {
  let manifests: Manifest[] = [];
  const namespace = 'kubeloop-system';
  const enabled = FUNCTIONS.filter((fn) => (values.functions as Record<string, { enabled?: boolean }> | undefined)?.[fn]?.enabled !== false);
  const webhookEnabled = (values.webhook as { enabled?: boolean } | undefined)?.enabled !== false;

  beforeAll(async () => {
    manifests = (await renderChart(helmBinary, { namespace, values, withTests: true })).manifests;
  });

  it('runs every pod restricted: non-root, read-only root, no escalation, drop ALL, RuntimeDefault, requests and limits', () => {
    const specs = manifests.flatMap((m) => podSpecsOf(m).map((spec): [string, PodSpecLike] => [`${m.kind}/${m.metadata.name}`, spec]));
    expect(specs.length).toBeGreaterThanOrEqual(enabled.length + 1);
    for (const [where, spec] of specs) assertRestrictedPod(where, spec);
  });

  it('gives each enabled function a Loop whose URL points at its Service or Knative Service', () => {
    const loops = byKind(manifests, 'ClusterLoop') as LoopManifest[];
    expect(loops.map((l) => l.metadata.name).sort()).toEqual(enabled.map((fn) => `${RELEASE}-${fn}`).sort());
    for (const loop of loops) {
      const url = new URL(loop.spec.function.url);
      const name = loop.metadata.name;
      const knative = manifests.find((m) => m.kind === 'Service' && m.apiVersion === 'serving.knative.dev/v1' && m.metadata.name === name);
      if (knative) {
        expect(url.host).toBe(`${name}.${namespace}.svc.cluster.local`);
        expect(manifests.some((m) => m.kind === 'Deployment' && m.metadata.name === name)).toBe(false);
      } else {
        const service = manifests.find((m) => m.kind === 'Service' && m.apiVersion === 'v1' && m.metadata.name === name) as
          | (Manifest & { spec: { ports: Array<{ port: number }> } })
          | undefined;
        expect(service, `Service ${name} for Loop ${name}`).toBeDefined();
        expect(url.hostname).toBe(`${name}.${namespace}.svc`);
        expect(service?.spec.ports.map((p) => p.port)).toContain(Number(url.port));
        one(manifests, 'Deployment', name);
      }
      expect(['/', '/reconcile']).toContain(url.pathname);
    }
  });

  it('installs the same Loop specs as samples/loops/ (all but the function URL, the signing key and the ServiceAccount)', async () => {
    const withoutUrl = (spec: LoopManifest['spec']): unknown => ({ ...spec, function: { ...spec.function, url: undefined, signingSecretRef: undefined }, serviceAccount: undefined });
    for (const loop of byKind(manifests, 'ClusterLoop') as LoopManifest[]) {
      const fn = loop.metadata.name.slice(`${RELEASE}-`.length);
      // Each Loop runs as its own ServiceAccount, which the chart creates in the release namespace.
      expect(loop.spec.serviceAccount).toEqual({ namespace, name: `${RELEASE}-loop-${fn}` });
      one(manifests, 'ServiceAccount', `${RELEASE}-loop-${fn}`);
      const [sample] = parseManifests(await readFile(join(REPO_ROOT, 'samples', 'loops', `${fn}.yaml`), 'utf8')) as LoopManifest[];
      const expected = withoutUrl(sample!.spec) as { namespaces?: string[] };
      const overridden = (values.functions as Record<string, { loop?: { namespaces?: string[] } }> | undefined)?.[fn]?.loop?.namespaces;
      if (overridden) expected.namespaces = overridden;
      // A function scaled to zero by Knative is woken by each resync: its Loop resyncs every 6 h instead.
      const onKnative = manifests.some((m) => m.apiVersion === 'serving.knative.dev/v1' && m.metadata.name === loop.metadata.name);
      if (onKnative) (expected as { resyncPeriodSeconds?: number }).resyncPeriodSeconds = 21_600;
      expect(withoutUrl(loop.spec), `Loop ${loop.metadata.name} vs samples/loops/${fn}.yaml`).toEqual(expected);
    }
  });

  it('lets the router only read the kinds its Loops name and impersonate their ServiceAccounts, each Loop write only its kinds, and functions nothing at all', () => {
    const routerSa = `${RELEASE}-router`;
    const loops = byKind(manifests, 'ClusterLoop') as LoopManifest[];
    const own = ['kubeloop.dev/clusterloops', 'kubeloop.dev/clusterloops/status', 'kubeloop.dev/loops', 'kubeloop.dev/loops/status', '/events', 'events.k8s.io/events', 'coordination.k8s.io/leases', 'authorization.k8s.io/subjectaccessreviews'];
    // Services (and Knative Services) are read to resolve Loops' spec.function.ref; EndpointSlices to see
    // where a function's Service leads before connecting (lib/function-client/cluster-addresses.ts); Namespaces
    // (list and watch, metadata only) for the tenant-weight label (docs/router.md#fairness-across-tenants).
    const named = new Set<string>([...own, '/serviceaccounts', '/services', 'serving.knative.dev/services', 'discovery.k8s.io/endpointslices', '/namespaces']);
    const loopKinds = new Set<string>();
    for (const loop of loops) {
      for (const ref of [loop.spec.for, ...(loop.spec.owns ?? [])]) {
        const base = `${group(ref.apiVersion)}/${plural(ref.kind)}`;
        named.add(base).add(`${base}/status`).add(`${base}/finalizers`);
        loopKinds.add(base);
      }
    }
    const roles = [...byKind(manifests, 'ClusterRole'), ...byKind(manifests, 'Role')];
    const bindings = [...byKind(manifests, 'ClusterRoleBinding'), ...byKind(manifests, 'RoleBinding')];
    for (const role of roles) {
      for (const rule of rulesOf(role)) {
        expect([...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs], `${role.metadata.name} uses no wildcard`).not.toContain('*');
      }
    }
    const rolesOf = (account: string) =>
      new Set(bindings.filter((b) => subjectsOf(b).some((s) => s.name === account)).map((b) => (b as unknown as { roleRef: { name: string } }).roleRef.name));
    const routerRoles = rolesOf(routerSa);
    expect(routerRoles.size).toBeGreaterThan(0);
    const loopAccounts = loops.map((l) => l.spec.serviceAccount?.name ?? '');
    // The history API's Role (get pods in the release namespace, to find a replica) is checked in 'the history API values'.
    for (const role of roles.filter((r) => routerRoles.has(r.metadata.name) && r.metadata.name !== `${RELEASE}-router-history-peers`)) {
      for (const rule of rulesOf(role)) {
        for (const g of rule.apiGroups ?? []) {
          for (const r of rule.resources ?? []) {
            expect(named, `${role.metadata.name} grants ${g}/${r}`).toContain(`${g}/${r}`);
            // The router's informers read what Loops receive; every write is made as a Loop's ServiceAccount.
            if (loopKinds.has(`${g}/${r}`) && !own.includes(`${g}/${r}`)) expect(rule.verbs, `${role.metadata.name} on ${g}/${r}`).toEqual(['get', 'list', 'watch']);
            if (r === 'serviceaccounts') {
              expect(rule.verbs).toEqual(['impersonate']);
              expect([...(rule.resourceNames ?? [])].sort()).toEqual([...loopAccounts].sort());
            }
          }
        }
      }
    }
    for (const loop of loops) {
      const account = loop.spec.serviceAccount?.name ?? '';
      const granted = roles.filter((r) => rolesOf(account).has(r.metadata.name)).flatMap(rulesOf);
      // Besides its kinds, a Loop's ServiceAccount reads its signing key (checked below): nothing else.
      const kinds = [...[loop.spec.for, ...(loop.spec.owns ?? [])].map((ref) => `${group(ref.apiVersion)}/${plural(ref.kind)}`), '/secrets'];
      for (const rule of granted) for (const g of rule.apiGroups ?? []) for (const r of rule.resources ?? []) expect(kinds.map((k) => [k, `${k}/status`, `${k}/finalizers`]).flat(), `${account} grants ${g}/${r}`).toContain(`${g}/${r}`);
      expect(granted.some((rule) => rule.verbs.includes('create') || rule.verbs.includes('patch')), `${account} may write`).toBe(true);
    }
    const functionSa = one(manifests, 'ServiceAccount', `${RELEASE}-function`) as Manifest & { automountServiceAccountToken?: boolean };
    expect(functionSa.automountServiceAccountToken).toBe(false);
    for (const binding of bindings) expect(subjectsOf(binding).map((s) => s.name)).not.toContain(`${RELEASE}-function`);
    // Secrets: only the webhook's own, by name (create cannot be limited by name), each Loop's signing key,
    // readable and watchable by name (get, list, watch) by that Loop's ServiceAccount alone, in the release
    // namespace, and the admission functions' keys, readable (get) by the webhook gateway alone.
    const signingRoles = new Map(loops.map((l) => [`${RELEASE}-router-loop-${l.metadata.name.slice(`${RELEASE}-`.length)}-signing`, l]));
    for (const role of roles) {
      for (const rule of rulesOf(role).filter((r) => r.resources?.includes('secrets'))) {
        const loop = signingRoles.get(role.metadata.name);
        if (loop) {
          expect(role.kind).toBe('Role');
          expect(role.metadata.namespace).toBe(namespace);
          expect(rule).toEqual({ apiGroups: [''], resources: ['secrets'], resourceNames: [loop.spec.function.signingSecretRef?.name], verbs: ['get', 'list', 'watch'] });
          const holders = bindings.filter((b) => (b as unknown as { roleRef: { name: string } }).roleRef.name === role.metadata.name).flatMap(subjectsOf);
          expect(holders.map((h) => h.name)).toEqual([loop.spec.serviceAccount?.name]);
        } else if (role.metadata.name === `${RELEASE}-webhook-signing`) {
          // The gateway signs admission calls: it may get the admission functions' keys, nothing else.
          const hookSecrets = byKind(manifests, 'ClusterAdmissionHook').map((h) => (h as Manifest & { spec: { function: { signingSecretRef?: { name: string } } } }).spec.function.signingSecretRef?.name);
          expect(rule).toEqual({ apiGroups: [''], resources: ['secrets'], resourceNames: hookSecrets, verbs: ['get'] });
          expect(role.metadata.namespace).toBe(namespace);
        } else if (rule.verbs.some((v) => v !== 'create')) expect(rule.resourceNames, `${role.metadata.name} names the Secrets it reads`).toEqual([`${RELEASE}-webhook-tls`]);
      }
    }
  });

  it('lets only the router, the webhook gateway (for admission functions) and Knative\'s data plane (when used) call functions, and only the webhook\'s admission and ops ports in', () => {
    const policies = byKind(manifests, 'NetworkPolicy') as Array<Manifest & { spec: { podSelector: { matchLabels: Record<string, string> }; ingress: Array<{ from?: unknown[]; ports?: Array<{ port: number }> }> } }>;
    if ((values.networkPolicy as { enabled?: boolean } | undefined)?.enabled === false) {
      expect(policies).toEqual([]);
      return;
    }
    const functions = one(manifests, 'NetworkPolicy', `${RELEASE}-functions`) as (typeof policies)[number];
    expect(functions.spec.podSelector.matchLabels['app.kubernetes.io/component']).toBe('function');
    const sources = functions.spec.ingress.flatMap((rule) => rule.from ?? []) as Array<{ podSelector?: { matchLabels: Record<string, string> }; namespaceSelector?: unknown }>;
    const admission = webhookEnabled && byKind(manifests, 'ClusterAdmissionHook').length > 0;
    expect(sources.filter((f) => f.podSelector).map((f) => f.podSelector?.matchLabels['app.kubernetes.io/component'])).toEqual(admission ? ['router', 'webhook'] : ['router']);
    const usesKnative = manifests.some((m) => m.apiVersion === 'serving.knative.dev/v1');
    expect(sources.some((f) => f.namespaceSelector), 'Knative namespaces admitted exactly when a function runs on Knative').toBe(usesKnative);
    if (webhookEnabled) {
      const webhook = one(manifests, 'NetworkPolicy', `${RELEASE}-webhook`) as (typeof policies)[number];
      expect(webhook.spec.ingress.flatMap((rule) => (rule.ports ?? []).map((p) => p.port))).toEqual([8443, 8082]);
    }
  });

  it('renders the Watcher sidecar AdmissionHook as samples/admission-hooks/ (the function too with the default values) and empty hook configurations', async () => {
    const rendered = byKind(manifests, 'MutatingWebhookConfiguration');
    if (!webhookEnabled) {
      expect([...rendered, ...byKind(manifests, 'ClusterAdmissionHook')]).toEqual([]);
      return;
    }
    // Only the gateway's own configurations: the Watcher injector's of older charts is gone.
    expect([...rendered, ...byKind(manifests, 'ValidatingWebhookConfiguration')].map((c) => [c.metadata.name, (c as { webhooks?: unknown[] }).webhooks])).toEqual([
      [`${RELEASE}-admission-hooks`, []],
      [`${RELEASE}-admission-hooks`, []],
    ]);
    const [mwc] = rendered;
    for (const fn of ADMISSION_FUNCTIONS) {
      const hook = one(manifests, 'ClusterAdmissionHook', `${RELEASE}-${fn}`) as Manifest & { spec: { function: { service?: { name: string; namespace: string; port: number; path: string }; signingSecretRef?: unknown } } };
      const [sample] = parseManifests(await readFile(join(REPO_ROOT, 'samples', 'admission-hooks', `${fn}.yaml`), 'utf8')) as Array<typeof hook>;
      expect({ ...hook.spec, function: undefined }, `AdmissionHook ${fn} vs samples/admission-hooks/${fn}.yaml`).toEqual({ ...sample!.spec, function: undefined });
      const service = manifests.find((m) => m.kind === 'Service' && m.metadata.name === `${RELEASE}-${fn}`) as (Manifest & { apiVersion: string; spec: { ports?: Array<{ port: number }> } }) | undefined;
      expect(service, `Service ${RELEASE}-${fn}`).toBeDefined();
      const port = service?.apiVersion === 'serving.knative.dev/v1' ? 80 : service?.spec.ports?.[0]?.port;
      const { signingSecretRef, ...called } = hook.spec.function;
      expect(called).toEqual({ service: { name: `${RELEASE}-${fn}`, namespace, port, path: '/admit' } });
      // Signed as the Loops are: the chart's generated key (chart-signing.test.ts checks the rest).
      const signing = (values.signing as { enabled?: boolean } | undefined)?.enabled !== false;
      expect(signingSecretRef).toEqual(signing ? { name: `${RELEASE}-${fn}-signing`, namespace, key: 'secret' } : undefined);
      if (Object.keys(values).length === 0) expect(sample!.spec.function, `samples/admission-hooks/${fn}.yaml names the Service the chart renders`).toEqual(called);
    }
    const certManager = (values.webhook as { certificates?: { mode?: string } } | undefined)?.certificates?.mode === 'cert-manager';
    const annotations = (mwc?.metadata as { annotations?: Record<string, string> }).annotations ?? {};
    if (certManager) {
      expect(annotations['cert-manager.io/inject-ca-from']).toBe(`${namespace}/${RELEASE}-webhook`);
      const certificate = one(manifests, 'Certificate', `${RELEASE}-webhook`) as Manifest & { spec: { secretName: string; dnsNames: string[] } };
      expect(certificate.spec.dnsNames).toContain(`${RELEASE}-webhook.${namespace}.svc`);
      const deployment = one(manifests, 'Deployment', `${RELEASE}-webhook`);
      expect(JSON.stringify(deployment)).toContain(certificate.spec.secretName);
    } else {
      expect(annotations).not.toHaveProperty('cert-manager.io/inject-ca-from');
      expect(byKind(manifests, 'Certificate')).toEqual([]);
    }
  });

  it('runs the router and the webhook with two replicas, leader election and a PodDisruptionBudget by default', () => {
    if (Object.keys(values).length > 0 && !('webhook' in values) && !('router' in values)) return;
    const router = one(manifests, 'Deployment', `${RELEASE}-router`) as Manifest & { spec: { replicas: number; template: { spec: { containers: Array<{ args: string[] }> } } } };
    const leaderElect = router.spec.template.spec.containers[0]?.args.includes('--leader-elect');
    if ((values.router as { leaderElection?: { enabled?: boolean } } | undefined)?.leaderElection?.enabled === false) {
      expect(leaderElect).toBe(false);
      return;
    }
    expect(router.spec.replicas).toBe(2);
    expect(leaderElect).toBe(true);
    if (webhookEnabled) {
      const webhook = one(manifests, 'Deployment', `${RELEASE}-webhook`) as Manifest & { spec: { replicas: number } };
      expect(webhook.spec.replicas).toBe(2);
      one(manifests, 'PodDisruptionBudget', `${RELEASE}-webhook`);
    }
  });
});

describe('on the local control plane', () => {
  let workDir = '';
  let cluster: ClusterSuite;
  let kubectl = '';

  beforeAll(async () => {
    cluster = await setupClusterSuite('chart');
    kubectl = cluster.binaries.kubectl;
    workDir = await mkdtemp(join(tmpdir(), 'kubeloop-chart-'));
    const files = [...chartCrdFiles(REPO_ROOT), ...(await knativeServingCrdFiles()), ...(await certManagerCrdFiles())];
    await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'apply', '--server-side', '--force-conflicts', ...files.flatMap((f) => ['-f', f])]);
    await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'wait', '--for=condition=Established', '--timeout=60s', 'crd/services.serving.knative.dev', 'crd/certificates.cert-manager.io', 'crd/issuers.cert-manager.io', 'crd/clusterloops.kubeloop.dev']);
    // Pod Security admission warns about any workload that would not run under "restricted".
    await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'label', 'namespace', cluster.namespace, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted', '--overwrite']);
  });

  afterAll(async () => {
    if (workDir) await rm(workDir, { recursive: true, force: true });
    await cluster?.cleanup();
  });

  it.each(Object.entries(VALUE_SETS))('accepts every manifest rendered with the %s values (server-side dry run)', async (name, values) => {
    const { manifests } = await renderChart(helmBinary, { namespace: cluster.namespace, values, withTests: true });
    const file = join(workDir, `${name.replace(/\W+/g, '-')}.yaml`);
    await writeFile(file, manifests.map((m) => stringify(m)).join('---\n'));
    const { stdout, stderr } = await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'apply', '--dry-run=server', '--validate=strict', '--server-side', '--field-manager=helm', '-f', file]);
    expect(stderr).not.toMatch(/Warning/);
    expect(stdout.trim().split('\n')).toHaveLength(manifests.length);
  });

  it('installs with helm (pods admitted under enforce=restricted), runs the helm test hook, and helm uninstall leaves nothing behind', async () => {
    const release = `kl-${cluster.namespace.slice(-4)}`;
    const kube = ['--kubeconfig', cluster.kubeconfigPath];
    // Keep the shared control plane quiet for other suites: Loops and the webhook only see this namespace.
    const values = {
      webhook: { onlyNamespaces: [cluster.namespace], onlyReleaseHooks: true },
      functions: Object.fromEntries(FUNCTIONS.map((fn) => [fn, { loop: { namespaces: [cluster.namespace] } }])),
      // Other suites create Loops on this control plane meanwhile: the policy, like the router, takes this release's only.
      // The suites share the control plane and applied the CRDs without Helm's ownership metadata (see the
      // adoption test below).
      crds: { install: false, keep: true },
    };
    const file = await valuesFile(values);
    try {
      const install = await helm(helmBinary, ['install', release, CHART_DIR, ...kube, '--namespace', cluster.namespace, '--wait', '--timeout', '3m', ...file.args]);
      expect(install.stderr).toBe('');
      expect(install.code).toBe(0);
      expect(install.stdout).toMatch(/helm test/);
      // The certs commands as this release needs them (its names are not the CLI's defaults).
      expect(install.stdout).toContain(`kubeloop certs show --namespace ${cluster.namespace} --service ${release}-kubeloop-webhook --secret ${release}-kubeloop-webhook-tls --configuration ${release}-kubeloop-admission-hooks`);
      const selector = `app.kubernetes.io/instance=${release}`;
      const listed = async (kinds: string, namespaced: boolean): Promise<string[]> => {
        const args = [...kube, 'get', kinds, '-l', selector, '-o', 'name', ...(namespaced ? ['-n', cluster.namespace] : [])];
        const { stdout } = await run(kubectl, args);
        return stdout.split('\n').filter(Boolean).sort();
      };
      const namespacedKinds = 'deployments,replicasets,pods,services,serviceaccounts,roles,rolebindings,networkpolicies,poddisruptionbudgets,secrets,configmaps';
      const clusterKinds = 'clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingadmissionpolicies,validatingadmissionpolicybindings,clusterloops.kubeloop.dev,clusteradmissionhooks.kubeloop.dev';
      // ClusterRoles: the router's Loop reader, per Loop its ServiceAccount's and the router's read-only one, the
      // webhook's, per AdmissionHook its ServiceAccount's context reader, the three aggregated tenant roles
      // (admin, edit, view); cluster bindings: router, webhook and each
      // hook's (Loops limited to namespaces are bound by RoleBindings there); one webhook configuration; the Loop
      // and AdmissionHook admission policies and their bindings; the Loops.
      const clusterScoped = await listed(clusterKinds, false);
      expect(clusterScoped.filter((n) => n.startsWith('clusterrole.'))).toHaveLength(2 + 3 + 2 * FUNCTIONS.length + ADMISSION_FUNCTIONS.length);
      expect(clusterScoped.filter((n) => n.startsWith('validatingadmissionpolic'))).toHaveLength(4);
      expect(clusterScoped.filter((n) => n.startsWith('clusterrolebinding.'))).toHaveLength(2 + ADMISSION_FUNCTIONS.length);
      // The AdmissionHook gateway's configuration (the Watcher sidecar is one of its hooks) and that hook.
      expect(clusterScoped.filter((n) => n.startsWith('mutatingwebhookconfiguration.'))).toHaveLength(1);
      expect(clusterScoped.filter((n) => n.startsWith('clusteradmissionhook.'))).toHaveLength(ADMISSION_FUNCTIONS.length);
      expect(clusterScoped.filter((n) => n.startsWith('clusterloop.'))).toHaveLength(FUNCTIONS.length);
      const ready = await eventually('router and webhook Deployments available', async () => {
        const { stdout } = await run(kubectl, [...kube, '-n', cluster.namespace, 'get', 'deployments', '-l', selector, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.availableReplicas}{"\\n"}{end}']);
        const lines = stdout.split('\n').filter(Boolean);
        // Each Deployment available, the router with both its replicas: one may turn available after the others.
        const all = lines.length === 2 + FUNCTIONS.length + ADMISSION_FUNCTIONS.length && lines.every((l) => !l.endsWith('='));
        return all && lines.includes(`${release}-kubeloop-router=2`) ? lines : undefined;
      }, 60_000);
      expect(ready).toContain(`${release}-kubeloop-router=2`);
      // An upgrade keeps each function's signing key (lookup), so the router and the function still agree.
      const signingKey = async () => (await run(kubectl, [...kube, '-n', cluster.namespace, 'get', 'secret', `${release}-kubeloop-podset-signing`, '-o', 'jsonpath={.data.secret}'])).stdout;
      const before = await signingKey();
      expect(Buffer.from(before, 'base64').toString('utf8')).toMatch(/^whsec_/);
      const upgrade = await helm(helmBinary, ['upgrade', release, CHART_DIR, ...kube, '--namespace', cluster.namespace, '--wait', '--timeout', '3m', ...file.args]);
      expect(upgrade.code).toBe(0);
      expect(await signingKey()).toBe(before);
      // kwok only simulates containers, so this proves the hook's shape (admitted under enforce=restricted,
      // run and reported by helm), not that the check inside it passes; images.test.ts covers the servers.
      const test = await helm(helmBinary, ['test', release, ...kube, '--namespace', cluster.namespace, '--timeout', '2m']);
      expect(test.stderr + test.stdout).toMatch(/TEST SUITE:\s+\S+-test-readiness[\s\S]*Phase:\s+Succeeded/);

      const uninstall = await helm(helmBinary, ['uninstall', release, ...kube, '--namespace', cluster.namespace, '--wait', '--timeout', '2m']);
      expect(uninstall.code).toBe(0);
      expect(await listed(clusterKinds, false)).toEqual([]);
      await eventually('no object of the release left in its namespace', async () => (await listed(namespacedKinds, true)).length === 0, 60_000);
      const { stdout: releases } = await run(kubectl, [...kube, '-n', cluster.namespace, 'get', 'secrets', '-l', `owner=helm,name=${release}`, '-o', 'name']);
      expect(releases.trim()).toBe('');
    } finally {
      await file.cleanup();
    }
  });

  it('adopts seed CRDs applied before they were templates (docs/deploy.md), then keeps them on uninstall', async () => {
    const release = `kc-${cluster.namespace.slice(-4)}`;
    const kube = ['--kubeconfig', cluster.kubeconfigPath, '--namespace', cluster.namespace];
    // No workload needed: the release's CRDs are what this is about.
    const values = {
      router: { replicas: 1, leaderElection: { enabled: false } },
      webhook: { enabled: false },
      networkPolicy: { enabled: false },
      functions: Object.fromEntries(FUNCTIONS.map((fn) => [fn, { enabled: false }])),
      crds: { install: false, keep: true },
    };
    const file = await valuesFile(values);
    const adopting = await valuesFile({ ...values, crds: { install: true, keep: true } });
    const seedCrds = ['ats.cnat.kubeloop.dev', 'podsets.app.kubeloop.dev', 'watchers.watch.kubeloop.dev'].map((n) => `crd/${n}`);
    const crdPolicy = async () => (await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'get', ...seedCrds, '-o', "jsonpath={range .items[*]}{.metadata.annotations['helm\\.sh/resource-policy']} {end}"])).stdout.trim();
    try {
      expect((await helm(helmBinary, ['install', release, CHART_DIR, ...kube, ...file.args])).code).toBe(0);
      // The CRDs exist (applied in beforeAll, as the former crds/ folder did) but belong to no release.
      const refused = await helm(helmBinary, ['upgrade', release, CHART_DIR, ...kube, ...adopting.args]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/exists and cannot be imported into the current release: invalid ownership metadata/);
      await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'label', '--overwrite', ...seedCrds, 'app.kubernetes.io/managed-by=Helm']);
      await run(kubectl, ['--kubeconfig', cluster.kubeconfigPath, 'annotate', '--overwrite', ...seedCrds, `meta.helm.sh/release-name=${release}`, `meta.helm.sh/release-namespace=${cluster.namespace}`]);
      const upgrade = await helm(helmBinary, ['upgrade', release, CHART_DIR, ...kube, ...adopting.args]);
      expect(upgrade.stderr).toBe('');
      expect(upgrade.code).toBe(0);
      expect(await crdPolicy()).toBe('keep keep keep');
      // crds.keep: the CRDs, and with them every PodSet, At and Watcher in the cluster, outlive the release.
      const uninstall = await helm(helmBinary, ['uninstall', release, ...kube]);
      expect(uninstall.code).toBe(0);
      expect(uninstall.stdout + uninstall.stderr).toMatch(/kept due to the resource policy/);
      expect(await crdPolicy()).toBe('keep keep keep');
    } finally {
      await file.cleanup();
      await adopting.cleanup();
    }
  });
});
