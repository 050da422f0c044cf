// The chart's least-privilege RBAC is also enough: the router and the webhook run with exactly the rendered
// ServiceAccounts, (Cluster)Roles and bindings, and the arguments of the rendered Deployments; the router
// (acting as each Loop's own ServiceAccount) against the chart's Loops (URLs moved to local function processes) until all four seeds converge, the
// webhook until it has created its certificate Secret and injected the caBundle of the chart's configuration
// (into the Watcher sidecar AdmissionHook's webhook, which needs the Watcher cache the chart lets it read).
// Calls are signed as the chart sets them up: each function reads its rendered signing Secret's key from a
// file (the chart's mount), and the router reads the Secret as the Loop's ServiceAccount.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { chartCrdFiles } from '../../cli/chart-crds.ts';
import { startLocalProcess, stopLocalProcesses, type LocalProcess } from '../../cli/dev/local-processes.ts';
import { eventually } from '../cluster/eventually.ts';
import { setupClusterSuite, type ClusterSuite } from '../cluster/suite.ts';
import { writeTokenKubeconfig } from '../cluster/token-kubeconfig.ts';
import { byKind, one, renderChart, type Manifest } from './chart-render.ts';
import { FUNCTIONS } from './chart-fixtures.ts';

const run = promisify(execFile);
const RBAC_KINDS = new Set(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);

let cluster: ClusterSuite;
let workDir = '';
let release = '';
let manifests: Manifest[] = [];
const processes: LocalProcess[] = [];

async function kube(...args: string[]): Promise<string> {
  const { stdout } = await run(cluster.binaries.kubectl, ['--kubeconfig', cluster.kubeconfigPath, ...args]);
  return stdout;
}

async function applyObjects(name: string, objects: unknown[]): Promise<void> {
  const file = join(workDir, `${name}.yaml`);
  await writeFile(file, objects.map((o) => stringify(o)).join('---\n'));
  await kube('apply', '--server-side', '-f', file);
}

/** A kubeconfig that authenticates as one of the chart's ServiceAccounts. */
async function kubeconfigFor(serviceAccount: string): Promise<string> {
  const token = (await kube('-n', cluster.namespace, 'create', 'token', serviceAccount, '--duration=30m')).trim();
  return writeTokenKubeconfig(cluster.kubeconfigPath, serviceAccount, token, join(workDir, `${serviceAccount}.kubeconfig`));
}

beforeAll(async () => {
  cluster = await setupClusterSuite('chart rbac');
  workDir = await mkdtemp(join(tmpdir(), 'kubeloop-chart-rbac-'));
  release = `rbac-${cluster.namespace.slice(-4)}`;
  await kube('apply', '--server-side', '--force-conflicts', ...chartCrdFiles().flatMap((f) => ['-f', f]));
  const values = {
    // Its configuration only ever sends this namespace's pods (and nothing serves its Service: Ignore).
    webhook: { onlyNamespaces: [cluster.namespace] },
    networkPolicy: { enabled: false },
    // This namespace only: the suite must not act on other suites' objects in the shared control plane.
    functions: Object.fromEntries(FUNCTIONS.map((fn) => [fn, { loop: { namespaces: [cluster.namespace] } }])),
  };
  manifests = (await renderChart(cluster.binaries.helm, { release, namespace: cluster.namespace, values })).manifests;

  const routerName = `${release}-kubeloop-router`;
  const webhookName = `${release}-kubeloop-webhook`;
  // The router's, the webhook's, and each Loop's own (the router acts as it); not the functions'.
  const serviceAccounts = new Set([routerName, webhookName, ...FUNCTIONS.map((fn) => `${release}-kubeloop-loop-${fn}`)]);
  await applyObjects('rbac', manifests.filter((m) => RBAC_KINDS.has(m.kind) && (m.kind !== 'ServiceAccount' || serviceAccounts.has(m.metadata.name))));
  const signingSecrets = byKind(manifests, 'Secret').filter((s) => s.metadata.name.endsWith('-signing'));
  // One per function the chart runs: each seed Loop's and the Watcher sidecar's (an admission function).
  expect(signingSecrets.map((s) => s.metadata.name).sort()).toEqual([...FUNCTIONS, 'watcher-sidecar'].map((fn) => `${release}-kubeloop-${fn}-signing`).sort());
  await applyObjects('signing-secrets', signingSecrets);
  await applyObjects('webhook-configuration', [...byKind(manifests, 'MutatingWebhookConfiguration'), ...byKind(manifests, 'ValidatingWebhookConfiguration'), ...byKind(manifests, 'ClusterAdmissionHook')]);

  const logDir = join(workDir, 'logs');
  await run('mkdir', ['-p', logDir]);
  const urls = new Map<string, string>();
  await mkdir(join(workDir, 'signing'));
  for (const fn of FUNCTIONS) {
    // The function's flag from the rendered Deployment, its mounted file written from the rendered Secret.
    const deployment = one(manifests, 'Deployment', `${release}-kubeloop-${fn}`) as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
    const flag = deployment.spec.template.spec.containers[0]?.args.find((a) => a.startsWith('--signing-secret-file='));
    expect(flag).toBeDefined();
    const secret = one(manifests, 'Secret', `${release}-kubeloop-${fn}-signing`) as Manifest & { data: { secret: string } };
    const keyFile = join(workDir, 'signing', fn);
    await writeFile(keyFile, Buffer.from(secret.data.secret, 'base64'));
    const started = await startLocalProcess({ name: `function-${fn}`, args: ['function', fn, `--signing-secret-file=${keyFile}`], logDir });
    processes.push(started);
    urls.set(`${release}-kubeloop-${fn}`, started.url);
  }
  const loops = byKind(manifests, 'ClusterLoop').map((loop) => {
    const spec = loop.spec as { function: { url: string } };
    const url = new URL(spec.function.url);
    return { ...loop, spec: { ...spec, function: { ...spec.function, url: `${urls.get(loop.metadata.name)}${url.pathname}` } } };
  });
  await applyObjects('loops', loops);

  const argsOf = (name: string): string[] => {
    const deployment = one(manifests, 'Deployment', name) as Manifest & { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
    return (deployment.spec.template.spec.containers[0]?.args ?? []).filter((a) => !a.startsWith('--port=') && !a.startsWith('--ops-port='));
  };
  // The pod's mounted cluster CA (--client-ca-file) is this control plane's, which signs its API server's webhook client certificate.
  const localCaFile = (args: string[]): string[] => args.map((a) => (a.startsWith('--client-ca-file=') ? `--client-ca-file=${join(inject('clusterDir'), 'pki', 'ca.crt')}` : a));
  // The functions listen on 127.0.0.1 here, which only dev mode's URL policy allows.
  processes.push(
    await startLocalProcess({ name: 'router', args: ['router', `--kubeconfig=${await kubeconfigFor(routerName)}`, ...argsOf(routerName), '--allow-loopback-functions'], logDir }),
  );
  processes.push(
    await startLocalProcess({ name: 'webhook', args: ['webhook', `--kubeconfig=${await kubeconfigFor(webhookName)}`, ...localCaFile(argsOf(webhookName))], scheme: 'https', opsPort: true, logDir }),
  );
}, 240_000);

afterAll(async () => {
  await stopLocalProcesses(processes);
  if (release) {
    await kube('delete', 'clusterloops.kubeloop.dev,clusteradmissionhooks.kubeloop.dev,clusterroles,clusterrolebindings,mutatingwebhookconfigurations,validatingwebhookconfigurations', '-l', `app.kubernetes.io/instance=${release}`, '--wait=false').catch(() => '');
  }
  if (workDir) await rm(workDir, { recursive: true, force: true });
  await cluster?.cleanup();
});

describe('the webhook with exactly the chart\'s RBAC and arguments', () => {
  it('creates its certificate Secret and injects the CA into the chart\'s webhook configuration', async () => {
    const secret = await kube('-n', cluster.namespace, 'get', 'secret', `${release}-kubeloop-webhook-tls`, '-o', 'jsonpath={.data.ca\\.crt}');
    expect(secret.length).toBeGreaterThan(100);
    await eventually('the caBundle to be the Secret\'s CA', async () => {
      const bundle = await kube('get', 'mutatingwebhookconfiguration', `${release}-kubeloop-admission-hooks`, '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}');
      return bundle === secret;
    }, 30_000);
  });

  it('watches RBAC and its webhook configurations, so a revoked right or an edited configuration is seen within seconds rather than at the periodic review', async () => {
    const webhook = processes.find((p) => p.name === 'webhook')!;
    const metrics = async () => (await fetch(`${webhook.opsUrl!}/metrics`)).text();
    // The watches start once the hooks are first registered: the gauges read 0 (or are absent) until then.
    await eventually('kubeloop_webhook_rbac_watch 1', async () => /^kubeloop_webhook_rbac_watch(\{[^}]*\})? 1$/m.test(await metrics()), 30_000);
    await eventually('kubeloop_webhook_configuration_watch 1', async () => /^kubeloop_webhook_configuration_watch(\{[^}]*\})? 1$/m.test(await metrics()), 30_000);
  });
});

describe('the router with exactly the chart\'s RBAC and arguments', () => {
  it('runs every Loop Ready and signed (no Forbidden watch, write or Secret read)', async () => {
    for (const loop of byKind(manifests, 'ClusterLoop')) expect((loop.spec as { function: { signingSecretRef?: unknown } }).function.signingSecretRef).toBeDefined();
    await eventually('all four Loops Ready=True', async () => {
      const out = await kube('get', 'clusterloops.kubeloop.dev', '-l', `app.kubernetes.io/instance=${release}`, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}');
      const lines = out.trim().split('\n').filter(Boolean);
      return lines.length === FUNCTIONS.length && lines.every((l) => l.endsWith('=True')) ? lines : undefined;
    }, 60_000);
  });

  it('watches RBAC, so a revoked right stops a Loop within seconds rather than at the periodic review', async () => {
    const router = processes.find((p) => p.name === 'router')!;
    const text = await (await fetch(`${router.url}/metrics`)).text();
    expect(text).toMatch(/^kubeloop_router_rbac_watch(\{[^}]*\})? 1$/m);
  });

  it('labels an annotated pod (pod-name-label: metadata-only watch and JSON patch)', async () => {
    await kube('-n', cluster.namespace, 'run', 'labelled', '--image=busybox:1.36', '--annotations=kubeloop.dev/add-pod-name-label=true', '--', 'sleep', '3600');
    await eventually('the pod-name label', async () => (await kube('-n', cluster.namespace, 'get', 'pod', 'labelled', '-o', 'jsonpath={.metadata.labels.kubeloop\\.dev/pod-name}')) === 'labelled', 30_000);
  });

  it('scales a PodSet (creates owned pods, writes status)', async () => {
    await applyObjects('podset', [{ apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'ps', namespace: cluster.namespace }, spec: { replicas: 2 } }]);
    await eventually('2 pods and availableReplicas 2', async () => {
      const pods = (await kube('-n', cluster.namespace, 'get', 'pods', '-l', 'app=ps', '-o', 'name')).trim().split('\n').filter(Boolean);
      return pods.length === 2 && (await kube('-n', cluster.namespace, 'get', 'podset', 'ps', '-o', 'jsonpath={.status.availableReplicas}')) === '2';
    }, 60_000);
  });

  it('gives a Watcher its ConfigMap', async () => {
    await applyObjects('watcher', [
      { apiVersion: 'watch.kubeloop.dev/v1alpha1', kind: 'Watcher', metadata: { name: 'w', namespace: cluster.namespace }, spec: { container: { name: 'w', image: 'busybox:1.36' }, configData: { MODE: 'rbac' } } },
    ]);
    await eventually('ConfigMap w-config with the data', async () => (await kube('-n', cluster.namespace, 'get', 'configmap', 'w-config', '-o', 'jsonpath={.data.MODE}')) === 'rbac', 30_000);
  });

  it('runs an At that is due and ends DONE', async () => {
    await applyObjects('at', [{ apiVersion: 'cnat.kubeloop.dev/v1alpha1', kind: 'At', metadata: { name: 'due', namespace: cluster.namespace }, spec: { schedule: '2020-11-16T10:12:00Z', command: 'echo done' } }]);
    await eventually('At DONE', async () => (await kube('-n', cluster.namespace, 'get', 'at', 'due', '-o', 'jsonpath={.status.phase}')) === 'DONE', 60_000);
  });
});
