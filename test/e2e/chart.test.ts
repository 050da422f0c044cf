// charts/kubeloop rendered with the real helm under every value set of chart-fixtures.ts: helm lint, and helm
// template's restricted pods, least-privilege RBAC, Loop URLs following the runtime, the Loops and AdmissionHooks
// matching samples/, network policies and replicas. chart-values.test.ts checks single values and the schema's
// errors; chart-install.test.ts dry-run applies every rendering to the real control plane and installs the chart.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { byKind, CHART_DIR, helm, one, parseManifests, renderChart, valuesFile, type Manifest } from './chart-render.ts';
import { REPO_ROOT } from '../support/production-bundle.ts';
import { assertRestrictedPod, podSpecsOf, type PodSpecLike } from './pod-security.ts';
import { ADMISSION_FUNCTIONS, FUNCTIONS, group, plural, RELEASE, rulesOf, subjectsOf, VALUE_SETS, type LoopManifest } from './chart-fixtures.ts';

// Rendering needs only helm.
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
    // (list and watch, metadata only) for the tenant-weight label (docs/router.md#fairness-across-tenants); RBAC
    // (list and watch, metadata only) to review a Loop's access again when it changes (docs/security.md).
    const rbac = ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'].map((r) => `rbac.authorization.k8s.io/${r}`);
    const named = new Set<string>([...own, '/serviceaccounts', '/services', 'serving.knative.dev/services', 'discovery.k8s.io/endpointslices', '/namespaces', ...rbac]);
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
