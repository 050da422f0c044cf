// The world console.test.ts drives, started once for the file: a control plane of its own whose API server sends
// its spans to the console's OTLP/gRPC receiver, a router with the podset Loop and one whose function is down, the
// history API and the gateway's admission history API behind APIServices (as kubeloop dev registers them), two
// tenants and a user bound only to `view` in team-a, a ClusterAdmissionHook, the admin's and the viewer's consoles
// and a headless Chromium. stopConsoleSuite closes whatever a failed start left running.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'puppeteer-core';
import { LOOP_API_VERSION, LOOP_KIND } from '../../api/loop.ts';
import { startControlPlane, type ControlPlane } from '../../cli/cluster/index.ts';
import { freePort } from '../../cli/cluster/free-port.ts';
import { createCertificateAuthority, issueCertificate } from '../../cli/cluster/pki.ts';
import { openConsole, type OpenConsole } from '../../cli/console/open-console.ts';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from '../../cli/console/otlp-grpc.ts';
import { TraceStore } from '../../cli/console/trace-store.ts';
import { applyManifest } from '../../cli/dev/apply-manifests.ts';
import { DEV_HISTORY_SERVICE, devHistoryManifests, GATEWAY_ADMISSIONS, prepareDevHistoryApi } from '../../cli/dev/dev-history-api.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { allow, defineAdmission, deny } from '../../lib/sdk/index.ts';
import { HOOK_SUITE_LABEL, startWebhookFor, type WebhookUnderTest } from './webhook-harness.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { startTracing, type Tracing } from '../../lib/observability/tracing.ts';
import { historySource, startHistoryApi, type HistoryApi } from '../../router/history/history-api.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { writeTokenKubeconfig } from '../cluster/token-kubeconfig.ts';
import { installCrds, podSetLoop, quietLogger, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { launchBrowser } from './console-browser.ts';

const APISERVICE = '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.history.kubeloop.dev';
const ADMISSIONS_APISERVICE = '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.admissions.kubeloop.dev';
const CLUSTER_HOOKS = '/apis/kubeloop.dev/v1alpha1/clusteradmissionhooks';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let dir: string;
let plane: ControlPlane;
let h: RouterHarness;
let ns: string;
let router: Router;
let historyApi: HistoryApi;
let metricsServer: Server;
let admin: OpenConsole;
let viewer: OpenConsole;
let tracing: Tracing;
let store: TraceStore;
let grpc: OtlpGrpcReceiver;
let browser: Browser;
let gateway: WebhookUnderTest | undefined;
let gate: ServedFunction | undefined;
let hookName: string;
const teams = { a: '', b: '' };

const log = (line: string): void => void process.stderr.write(`[console] ${line}\n`);

/** Serves the in-process router's registry as its /metrics, as the router's ops port does (empty until it starts). */
async function serveRouterMetrics(): Promise<string> {
  metricsServer = createHttpServer((_req, res) => {
    if (!router) return void res.writeHead(200).end('');
    void router.metrics.registry.metrics().then((text) => res.writeHead(200, { 'content-type': router.metrics.registry.contentType }).end(text));
  });
  await new Promise<void>((resolve) => metricsServer.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`;
}

/** The history API behind an APIService, as kubeloop dev registers it; every authenticated user may reach it (the chart's default). */
async function registerHistoryApi(): Promise<void> {
  const ca = await createCertificateAuthority('console-e2e-ca');
  const serving = await issueCertificate(ca, { commonName: DEV_HISTORY_SERVICE, usage: 'server', hosts: [`${DEV_HISTORY_SERVICE}.${ns}.svc`] });
  historyApi = await startHistoryApi({ source: historySource(router), client: h.client, logger: quietLogger(), port: 0, host: '127.0.0.1', tls: serving });
  const discovery = new ResourceDiscovery(h.client);
  for (const manifest of devHistoryManifests({ port: Number(new URL(historyApi.url).port), caPem: ca.certPem }, ns)) await applyManifest(h.client, discovery, manifest);
  await h.client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { metadata: { name: 'history-reader' }, rules: [{ apiGroups: ['history.kubeloop.dev'], resources: ['histories'], verbs: ['get'] }] } });
  await h.client.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: { metadata: { name: 'history-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'history-reader' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }] },
  });
  await eventually('the history APIService Available', () => available(APISERVICE), 90_000);
}

/** Two tenants with a Loop each (the router does not run them: they lack the suite's label), and a user bound only to `view` in team-a. */
async function makeTenants(): Promise<string> {
  teams.a = `team-a-${ns.slice(-4)}`;
  teams.b = `team-b-${ns.slice(-4)}`;
  for (const team of [teams.a, teams.b]) {
    await h.client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: team } } });
    const spec = { for: { apiVersion: 'v1', kind: 'ConfigMap' }, function: { url: 'http://127.0.0.1:9/' }, serviceAccount: { namespace: team, name: 'default' } };
    await h.client.request({ method: 'POST', path: `/apis/${LOOP_API_VERSION}/namespaces/${team}/loops`, body: { apiVersion: LOOP_API_VERSION, kind: LOOP_KIND, metadata: { name: `${team.slice(0, 6)}-loop` }, spec } });
  }
  // What the chart's tenant-view ClusterRole adds to `view` (charts/kubeloop/templates/tenant-rbac.yaml).
  await h.client.request({
    method: 'POST',
    path: `${RBAC}/clusterroles`,
    body: { metadata: { name: 'kubeloop-tenant-view', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [{ apiGroups: ['kubeloop.dev'], resources: ['loops', 'admissionhooks'], verbs: ['get', 'list', 'watch'] }] },
  });
  await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${teams.a}/serviceaccounts`, body: { metadata: { name: 'viewer' } } });
  await h.client.request({
    method: 'POST',
    path: `${RBAC}/namespaces/${teams.a}/rolebindings`,
    body: { metadata: { name: 'viewer' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: teams.a }] },
  });
  const token = await h.client.request<{ status: { token: string } }>({ method: 'POST', path: `/api/v1/namespaces/${teams.a}/serviceaccounts/viewer/token`, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } });
  return writeTokenKubeconfig(plane.kubeconfigPath, 'viewer', token.status.token, join(dir, 'viewer.kubeconfig'));
}

const available = async (path: string) => (await h.client.request<{ status?: { conditions?: Array<{ type: string; status: string }> } }>({ path })).status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');

/**
 * The gateway with its admission history API behind an APIService (as kubeloop dev registers it), every
 * authenticated user allowed to reach the API (the gateway then decides), and a ClusterAdmissionHook that
 * denies ConfigMaps labelled forbidden in the suite's namespace and both teams'.
 */
async function startGatewayWithHistory(): Promise<void> {
  const api = await prepareDevHistoryApi(dir, ns, GATEWAY_ADMISSIONS);
  gateway = await startWebhookFor(h.suite, [...api.serverArgs, '--admission-history-per-hook=200', `--only-namespace=${teams.a}`, `--only-namespace=${teams.b}`]);
  const discovery = new ResourceDiscovery(h.client);
  for (const manifest of devHistoryManifests(api, ns)) await applyManifest(h.client, discovery, manifest);
  await h.client.request({ method: 'POST', path: `${RBAC}/clusterroles`, body: { metadata: { name: 'admission-history-reader' }, rules: [{ apiGroups: ['admissions.kubeloop.dev'], resources: ['hookhistories'], verbs: ['get'] }] } });
  await h.client.request({
    method: 'POST',
    path: `${RBAC}/clusterrolebindings`,
    body: { metadata: { name: 'admission-history-reader' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admission-history-reader' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }] },
  });
  gate = await serveFunction(
    defineAdmission({ name: 'console-gate', type: 'validating', admit: (request) => (request.object?.metadata?.labels?.forbidden ? deny(`console-gate says no to ${request.name ?? ''}`) : allow()) }),
    { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'console-gate', level: 'warn' }) },
  );
  hookName = `console-gate-${ns}`;
  await h.client.request({
    method: 'POST',
    path: CLUSTER_HOOKS,
    body: {
      apiVersion: 'kubeloop.dev/v1alpha1',
      kind: 'ClusterAdmissionHook',
      metadata: { name: hookName, labels: { [HOOK_SUITE_LABEL]: ns } },
      spec: { type: 'validating', rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }], function: { url: `${gate.url}/admit` }, serviceAccount: h.loopServiceAccount },
    },
  });
  await eventually('the admission history APIService Available', () => available(ADMISSIONS_APISERVICE), 90_000);
}

/** What the tests drive. */
export interface ConsoleSuite {
  h: RouterHarness;
  /** The suite's namespace, where the podset Loop works. */
  ns: string;
  /** The console as the cluster admin, with the trace store and the router's metrics. */
  admin: OpenConsole;
  /** The console as the user bound only to `view` in team-a, over both teams' namespaces. */
  viewer: OpenConsole;
  teams: { a: string; b: string };
  /** The ClusterAdmissionHook whose admissions the gateway records. */
  hookName: string;
  browser: Browser;
}

export async function startConsoleSuite(): Promise<ConsoleSuite> {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-console-'));
  // The API server's own spans go to the console's OTLP/gRPC receiver, started before it.
  store = new TraceStore();
  grpc = await startOtlpGrpcReceiver(store);
  // Only requests whose caller sampled them (kubeloop's writes carry traceparent): the store keeps reconciles, not every list and watch.
  plane = await startControlPlane({ nodes: 1, apiserverTracing: { otlpGrpcEndpoint: grpc.endpoint, samplingRatePerMillion: 0 }, onProgress: log });
  h = await routerHarness('console', { kubeconfigPath: plane.kubeconfigPath, server: plane.server, binaries: plane.binaries, dir: plane.dir });
  ns = h.suite.namespace;
  await installCrds(h.client, ['podsets.app.kubeloop.dev.yaml', 'clusterloops.kubeloop.dev.yaml', 'loops.kubeloop.dev.yaml', 'clusteradmissionhooks.kubeloop.dev.yaml', 'admissionhooks.kubeloop.dev.yaml']);
  // The console first: the router and the function export their spans to it (OTLP/HTTP), as in kubeloop dev.
  admin = await openConsole({ kubeconfig: plane.kubeconfigPath, traceStore: store, routerMetrics: { url: await serveRouterMetrics() } });
  tracing = await startTracing({ otlpEndpoint: admin.otlpEndpoint, otlpHeaders: {}, samplingRatio: 1 }, 'kubeloop-e2e');
  const fn = await h.serve('podset');
  router = await h.router(undefined, { loopSelector: h.loopSelector });
  await h.createLoop('podset', podSetLoop(ns, fn.url).spec);
  // Its function is down: nothing listens on a free port.
  await h.createLoop('unreachable', { for: { apiVersion: 'v1', kind: 'ConfigMap' }, selector: { matchLabels: { console: 'broken' } }, namespaces: [ns], serviceAccount: h.loopServiceAccount, function: { url: `http://127.0.0.1:${await freePort()}/` } });
  await router.waitForLoop('podset');
  await registerHistoryApi();
  viewer = await openConsole({ kubeconfig: await makeTenants(), namespaces: [teams.a, teams.b] });
  await startGatewayWithHistory();
  browser = await launchBrowser();
  return { h, ns, admin, viewer, teams, hookName, browser };
}

export async function stopConsoleSuite(): Promise<void> {
  await browser?.close();
  await h?.client.request({ method: 'DELETE', path: `${CLUSTER_HOOKS}/${hookName}` }).catch(() => undefined);
  await gateway?.webhook.stop({ unregister: true });
  await gate?.close();
  await viewer?.close();
  await tracing?.shutdown();
  await admin?.close();
  await historyApi?.close();
  await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
  await h?.close();
  await plane?.stop();
  await grpc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}
