// charts/kubeloop's monitoring and operator-facing values: ServiceMonitor/PodMonitor (the webhook over HTTPS),
// PrometheusRule (every expression parsed by Prometheus' own PromQL grammar), the Grafana dashboard,
// name overrides, ServiceAccounts, scheduling, the router's PodDisruptionBudget, Artifact Hub annotations;
// and on the local control plane, the Prometheus Operator's CRDs accepting what an install creates.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parser as promql } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { chartCrdFiles } from '../../cli/chart-crds.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { byKind, CHART_DIR, helm, one, renderChart, templateWithValues, valuesFile, type Manifest } from './chart-render.ts';
import { prometheusOperatorCrdFiles } from './go-module-crds.ts';
import { waitEstablished } from '../cluster/crds-established.ts';

const run = promisify(execFile);
const helmBinary = inject('clusterBinaries').helm;
const NS = 'kubeloop-system';
const MONITORING = { serviceMonitor: { enabled: true }, podMonitor: { enabled: true }, prometheusRule: { enabled: true }, grafanaDashboard: { enabled: true } };

type Endpoint = { port: string; scheme: string; path: string; tlsConfig?: { serverName: string; ca: { secret: { name: string; key: string } } } };
type PodSpec = { serviceAccountName: string; priorityClassName?: string; topologySpreadConstraints?: Array<Record<string, unknown>> };

/** The PromQL syntax errors in an expression, found by the grammar Prometheus' own UI uses. */
function promqlErrors(expr: string): string[] {
  const errors: string[] = [];
  promql.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) errors.push(`at ${node.from}: ${JSON.stringify(expr.slice(Math.max(0, node.from - 20), node.to + 20))}`);
    },
  });
  return errors;
}

function podSpec(manifest: Manifest): PodSpec {
  return (manifest as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
}

describe('monitoring objects', () => {
  it('renders no ServiceMonitor, PodMonitor, PrometheusRule or dashboard by default (their CRDs may be missing)', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS });
    for (const kind of ['ServiceMonitor', 'PodMonitor', 'PrometheusRule']) expect(byKind(manifests, kind)).toEqual([]);
    expect(manifests.filter((m) => m.kind === 'ConfigMap' && m.metadata.name.endsWith('-dashboard'))).toEqual([]);
  });

  it('scrapes the router over HTTP, the webhook on its plain HTTP ops port (its admission port takes only the API server), and the functions', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { ...MONITORING, serviceMonitor: { enabled: true, labels: { release: 'prom' } } } });
    for (const kind of ['ServiceMonitor', 'PodMonitor']) {
      const key = kind === 'ServiceMonitor' ? 'endpoints' : 'podMetricsEndpoints';
      const endpoints = (name: string) => (one(manifests, kind, `kubeloop-${name}`) as unknown as { spec: Record<string, Endpoint[]> }).spec[key] ?? [];
      expect(endpoints('router')).toEqual([expect.objectContaining({ port: 'http-metrics', scheme: 'http', path: '/metrics', interval: '30s' })]);
      const [webhook] = endpoints('webhook');
      expect(webhook).toMatchObject({ port: 'http-ops', scheme: 'http', path: '/metrics' });
      expect(webhook?.tlsConfig).toBeUndefined();
      expect(endpoints('function').map((e) => e.port)).toEqual(kind === 'ServiceMonitor' ? ['http'] : ['http', 'http1']);
    }
    expect(one(manifests, 'ServiceMonitor', 'kubeloop-router').metadata).toMatchObject({ namespace: NS, labels: { release: 'prom' } });
    // The Services the ServiceMonitors select carry the named ports.
    const service = one(manifests, 'Service', 'kubeloop-webhook') as unknown as { spec: { ports: Array<{ name: string }> } };
    expect(service.spec.ports.map((p) => p.name)).toEqual(['https', 'http-ops']);
  });

  it('opens the webhook\'s ops port (not its admission port) to scrapes in the NetworkPolicy, and the functions\' only to the metrics namespaces', async () => {
    const selector = { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } };
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { serviceMonitor: { enabled: true }, networkPolicy: { metricsNamespaceSelector: selector } } });
    type Rule = { from: unknown[]; ports: Array<{ port: number }> };
    const rules = (name: string) => (one(manifests, 'NetworkPolicy', name) as unknown as { spec: { ingress: Rule[] } }).spec.ingress;
    const from = (name: string) => rules(name)[0]?.from ?? [];
    const [admission, ops] = rules('kubeloop-webhook');
    expect(admission).toEqual({ ports: [{ port: 8443, protocol: 'TCP' }], from: [{ ipBlock: { cidr: '0.0.0.0/0' } }] });
    expect(ops).toEqual({ ports: [{ port: 8082, protocol: 'TCP' }], from: [{ podSelector: {} }, { namespaceSelector: selector }] });
    expect(from('kubeloop-functions')).toContainEqual({ namespaceSelector: selector });
    expect(from('kubeloop-functions')).not.toContainEqual({ podSelector: {} });
  });

  it('alerts on a stuck queue, Loops not Ready, function errors, certificate expiry and no leader, each expression valid PromQL', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { prometheusRule: { enabled: true, additionalRuleLabels: { team: 'platform' } } } });
    const rule = one(manifests, 'PrometheusRule', 'kubeloop') as unknown as { spec: { groups: Array<{ rules: Array<{ alert: string; expr: string; labels: Record<string, string> }> }> } };
    const rules = rule.spec.groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert)).toEqual(['KubeloopWorkQueueStuck', 'KubeloopLoopNotReady', 'KubeloopFunctionErrorRate', 'KubeloopWebhookCertificateExpiresSoon', 'KubeloopRouterNoLeader']);
    for (const r of rules) {
      expect(promqlErrors(r.expr), `${r.alert}: ${r.expr}`).toEqual([]);
      expect(r.expr).toContain(`namespace="${NS}"`);
      expect(r.labels).toMatchObject({ team: 'platform' });
    }
    const expr = (alert: string) => rules.find((r) => r.alert === alert)?.expr ?? '';
    expect(expr('KubeloopWorkQueueStuck')).toMatch(/workqueue_longest_running_processor_seconds\{.*\}\) > 600$/);
    expect(expr('KubeloopLoopNotReady')).toMatch(/kubeloop_loop_condition\{.*type="Ready", status="False"\}/);
    expect(expr('KubeloopWebhookCertificateExpiresSoon')).toMatch(/kubeloop_webhook_serving_certificate_expiry_timestamp_seconds\{.*\}\) - time\(\) < 604800$/);
    // The grammar is strict enough to catch a broken expression.
    expect(promqlErrors('sum by (loop (rate(x[5m]))')).not.toEqual([]);
  });

  it('leaves out the webhook and leader alerts when those are off', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { prometheusRule: { enabled: true }, webhook: { enabled: false }, router: { replicas: 1, leaderElection: { enabled: false } } } });
    const text = JSON.stringify(one(manifests, 'PrometheusRule', 'kubeloop'));
    expect(text).not.toContain('KubeloopWebhookCertificateExpiresSoon');
    expect(text).not.toContain('KubeloopRouterNoLeader');
  });

  it('ships a Grafana dashboard ConfigMap for the sidecar whose every query is valid PromQL', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { grafanaDashboard: { enabled: true, annotations: { grafana_folder: 'kubeloop' } } } });
    const map = one(manifests, 'ConfigMap', 'kubeloop-dashboard') as unknown as { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; data: Record<string, string> };
    expect(map.metadata.labels.grafana_dashboard).toBe('1');
    expect(map.metadata.annotations.grafana_folder).toBe('kubeloop');
    const dashboard = JSON.parse(map.data['kubeloop.json'] ?? '') as { uid: string; panels: Array<{ targets: Array<{ expr: string }> }> };
    expect(dashboard.uid).toBe('kubeloop');
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr.replace(/\$__rate_interval/g, '5m').replace(/\$\w+/g, 'x')));
    expect(exprs.length).toBeGreaterThan(10);
    for (const expr of exprs) expect(promqlErrors(expr), expr).toEqual([]);
  });
});

describe('names, ServiceAccounts, scheduling and disruption', () => {
  it('names every object after fullnameOverride, or after nameOverride', async () => {
    const full = await renderChart(helmBinary, { namespace: NS, values: { fullnameOverride: 'loops' } });
    one(full.manifests, 'Deployment', 'loops-router');
    one(full.manifests, 'Deployment', 'loops-webhook');
    expect(full.manifests.filter((m) => m.metadata.name.includes('kubeloop-'))).toEqual([]);
    const named = await renderChart(helmBinary, { release: 'prod', namespace: NS, values: { nameOverride: 'ctl' } });
    const router = one(named.manifests, 'Deployment', 'prod-ctl-router');
    expect(router.metadata).toMatchObject({ labels: { 'app.kubernetes.io/name': 'ctl' } });
  });

  it('runs the router and the webhook as the ServiceAccounts named, created with annotations or not created at all', async () => {
    const { manifests } = await renderChart(helmBinary, {
      namespace: NS,
      values: { router: { serviceAccount: { name: 'loops-router', annotations: { 'iam.example.com/role': 'r' } } }, webhook: { serviceAccount: { create: false, name: 'existing-webhook' } } },
    });
    expect(one(manifests, 'ServiceAccount', 'loops-router').metadata).toMatchObject({ annotations: { 'iam.example.com/role': 'r' } });
    expect(manifests.filter((m) => m.kind === 'ServiceAccount' && m.metadata.name.endsWith('webhook'))).toEqual([]);
    expect(podSpec(one(manifests, 'Deployment', 'kubeloop-router')).serviceAccountName).toBe('loops-router');
    expect(podSpec(one(manifests, 'Deployment', 'kubeloop-webhook')).serviceAccountName).toBe('existing-webhook');
    // Every binding follows the names: nothing is granted to an account that does not run.
    const subjects = manifests
      .filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding')
      .flatMap((m) => (m as unknown as { subjects: Array<{ name: string }> }).subjects.map((s) => s.name));
    expect(subjects).toContain('loops-router');
    expect(subjects).toContain('existing-webhook');
    expect(subjects).not.toContain('kubeloop-router');
    expect(subjects).not.toContain('kubeloop-webhook');
  });

  it('binds the sharding Role (member Leases) to the router\'s configured ServiceAccount', async () => {
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { router: { sharding: { enabled: true }, serviceAccount: { name: 'loops-router' } } } });
    const binding = one(manifests, 'RoleBinding', 'kubeloop-router-sharding') as Manifest & { subjects: Array<{ kind: string; name: string; namespace: string }> };
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'loops-router', namespace: NS }]);
  });

  it('sets priorityClassName and topology spread constraints, defaulting each constraint\'s selector to the component\'s pods', async () => {
    const spread = [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' }];
    const { manifests } = await renderChart(helmBinary, { namespace: NS, values: { router: { priorityClassName: 'system-cluster-critical', topologySpreadConstraints: spread }, webhook: { topologySpreadConstraints: spread } } });
    const router = podSpec(one(manifests, 'Deployment', 'kubeloop-router'));
    expect(router.priorityClassName).toBe('system-cluster-critical');
    expect(router.topologySpreadConstraints).toEqual([{ ...spread[0], labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'kubeloop', 'app.kubernetes.io/instance': 'kubeloop', 'app.kubernetes.io/component': 'router' } } }]);
    const webhook = podSpec(one(manifests, 'Deployment', 'kubeloop-webhook'));
    expect(webhook.priorityClassName).toBeUndefined();
    expect(webhook.topologySpreadConstraints?.[0]?.labelSelector).toEqual({ matchLabels: expect.objectContaining({ 'app.kubernetes.io/component': 'webhook' }) });
  });

  it('keeps a router standby through drains with a PodDisruptionBudget, none over a single replica', async () => {
    const pdb = async (values: Record<string, unknown>) =>
      (await renderChart(helmBinary, { namespace: NS, values })).manifests.find((m) => m.kind === 'PodDisruptionBudget' && m.metadata.name === 'kubeloop-router') as (Manifest & { spec: Record<string, unknown> }) | undefined;
    expect((await pdb({}))?.spec).toMatchObject({ minAvailable: 1, selector: { matchLabels: { 'app.kubernetes.io/component': 'router' } } });
    expect((await pdb({ router: { podDisruptionBudget: { enabled: true, maxUnavailable: 1 } } }))?.spec).toMatchObject({ maxUnavailable: 1 });
    expect(await pdb({ router: { replicas: 1 } })).toBeUndefined();
    expect(await pdb({ router: { podDisruptionBudget: { enabled: false } } })).toBeUndefined();
  });

  it.each([
    ['a scrape interval that is not a duration', { serviceMonitor: { interval: '30 seconds' } }, /\/serviceMonitor\/interval'/],
    ['an error ratio above 1', { prometheusRule: { functionErrorRatio: 5 } }, /\/prometheusRule\/functionErrorRatio'/],
    ['a misspelt ServiceAccount key', { router: { serviceAccount: { craete: true } } }, /additional properties 'craete' not allowed/],
    ['an unknown whenUnsatisfiable', { router: { topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'k', whenUnsatisfiable: 'Maybe' }] } }, /whenUnsatisfiable/],
  ])('rejects %s, naming the setting', async (_what, values, message) => {
    const result = await templateWithValues(helmBinary, values);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
  });
});

describe('Artifact Hub annotations', () => {
  it('list the license, links, every image the chart runs by default and every CRD it ships', async () => {
    const chart = parseYaml(await readFile(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { appVersion: string; annotations: Record<string, string> };
    const values = parseYaml(await readFile(join(CHART_DIR, 'values.yaml'), 'utf8')) as { image: { registry: string }; router: { repository: string }; webhook: { repository: string }; functions: Record<string, { image?: { repository: string } }> };
    expect(chart.annotations['artifacthub.io/license']).toBe('Apache-2.0');
    expect((parseYaml(chart.annotations['artifacthub.io/links'] ?? '') as Array<{ url: string }>).length).toBeGreaterThan(0);
    const images = (parseYaml(chart.annotations['artifacthub.io/images'] ?? '') as Array<{ image: string }>).map((i) => i.image).sort();
    const repositories = [values.router.repository, values.webhook.repository, ...Object.values(values.functions).flatMap((f) => (f.image ? [f.image.repository] : []))];
    expect(images).toEqual(repositories.map((r) => `${values.image.registry}/${r}:${chart.appVersion}`).sort());
    const crds = (parseYaml(chart.annotations['artifacthub.io/crds'] ?? '') as Array<{ name: string }>).map((c) => c.name).sort();
    expect(crds).toEqual((await chartCrdNames()).sort());
  });
});

/** metadata.name of every CustomResourceDefinition file in the chart, wherever it keeps them. */
async function chartCrdNames(): Promise<string[]> {
  const files = (await readdir(CHART_DIR, { recursive: true })).filter((f) => /\.ya?ml$/.test(f) && !f.startsWith('templates'));
  const names: string[] = [];
  for (const file of files) {
    const doc = parseYaml(await readFile(join(CHART_DIR, file), 'utf8')) as { kind?: string; metadata?: { name?: string } } | null;
    if (doc?.kind === 'CustomResourceDefinition' && doc.metadata?.name) names.push(doc.metadata.name);
  }
  return names;
}

describe('on the local control plane with the Prometheus Operator\'s CRDs', () => {
  let cluster: ClusterSuite;
  let kube: string[] = [];

  beforeAll(async () => {
    cluster = await setupClusterSuite('chart-monitoring');
    kube = ['--kubeconfig', cluster.kubeconfigPath];
    const files = [...chartCrdFiles(), ...(await prometheusOperatorCrdFiles())];
    await run(cluster.binaries.kubectl, [...kube, 'apply', '--server-side', '--force-conflicts', ...files.flatMap((f) => ['-f', f])]);
    await waitEstablished(cluster.kubeConfig, ['servicemonitors.monitoring.coreos.com', 'podmonitors.monitoring.coreos.com', 'prometheusrules.monitoring.coreos.com']);
  });

  afterAll(async () => {
    await cluster?.cleanup();
  });

  it('installs ServiceMonitors, PodMonitors and a PrometheusRule the CRDs\' schemas accept, lists them, and says how to read metrics', async () => {
    const release = `km-${cluster.namespace.slice(-4)}`;
    const values = {
      ...MONITORING,
      webhook: { onlyNamespaces: [cluster.namespace], onlyReleaseHooks: true },
      // The suites share the control plane, whose CRDs were applied without Helm's ownership (see chart-install.test.ts).
      crds: { install: false, keep: true },
      seeds: { enabled: true },
      functions: { 'pod-name-label': { loop: { namespaces: [cluster.namespace] } }, podset: { enabled: false }, watcher: { enabled: false }, at: { enabled: false } },
    };
    const file = await valuesFile(values);
    try {
      const install = await helm(helmBinary, ['install', release, CHART_DIR, ...kube, '--namespace', cluster.namespace, ...file.args]);
      expect(install.stderr).toBe('');
      expect(install.code).toBe(0);
      // NOTES.txt: port-forward blocks, so it runs in the background before curl.
      expect(install.stdout).toMatch(/port-forward svc\/\S+ \d+ >\/dev\/null &\n\s+sleep 2; curl -s localhost:\d+\/metrics/);
      expect(install.stdout).not.toMatch(/port-forward[^\n]*&& curl/);
      const { stdout } = await run(cluster.binaries.kubectl, [...kube, '-n', cluster.namespace, 'get', 'servicemonitors,podmonitors,prometheusrules', '-l', `app.kubernetes.io/instance=${release}`, '-o', 'name']);
      const names = stdout.split('\n').filter(Boolean).sort();
      const components = ['function', 'router', 'webhook'];
      expect(names).toEqual([
        ...components.map((c) => `podmonitor.monitoring.coreos.com/${release}-kubeloop-${c}`),
        `prometheusrule.monitoring.coreos.com/${release}-kubeloop`,
        ...components.map((c) => `servicemonitor.monitoring.coreos.com/${release}-kubeloop-${c}`),
      ]);
      // The server kept the endpoint as rendered: the webhook's ops port, plain HTTP.
      const { stdout: endpoint } = await run(cluster.binaries.kubectl, [...kube, '-n', cluster.namespace, 'get', `servicemonitor/${release}-kubeloop-webhook`, '-o', 'jsonpath={.spec.endpoints[0].port} {.spec.endpoints[0].scheme}']);
      expect(endpoint).toBe('http-ops http');
      const uninstall = await helm(helmBinary, ['uninstall', release, ...kube, '--namespace', cluster.namespace, '--wait', '--timeout', '2m']);
      expect(uninstall.code).toBe(0);
    } finally {
      await file.cleanup();
    }
  });
});
