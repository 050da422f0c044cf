// `kubeloop console` in headless Chromium (Debian's package, driven by puppeteer-core) against a real control
// plane of its own (the history API's APIService is cluster-wide: the history suite registers its own on the
// shared plane) with a real router watching Loop objects, its history API registered as in kubeloop dev, and
// the console receiving the router's and the function's spans over OTLP. Each step of docs/observability.md's
// walkthrough is one test; each saves a screenshot under test-results/console/ and checks it is not blank.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOP_API_VERSION, LOOP_KIND } from '../../api/loop.ts';
import { startControlPlane, type ControlPlane } from '../../cli/cluster/index.ts';
import { freePort } from '../../cli/cluster/free-port.ts';
import { createCertificateAuthority, issueCertificate } from '../../cli/cluster/pki.ts';
import { openConsole, type OpenConsole } from '../../cli/console/open-console.ts';
import { startOtlpGrpcReceiver, type OtlpGrpcReceiver } from '../../cli/console/otlp-grpc.ts';
import { TraceStore } from '../../cli/console/trace-store.ts';
import { applyManifest } from '../../cli/dev/apply-manifests.ts';
import { DEV_HISTORY_SERVICE, devHistoryManifests } from '../../cli/dev/dev-history-api.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { startTracing, type Tracing } from '../../lib/observability/tracing.ts';
import { historySource, startHistoryApi, type HistoryApi } from '../../router/history/history-api.ts';
import type { Router } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { writeTokenKubeconfig } from '../cluster/token-kubeconfig.ts';
import { installCrds, podSetLoop, quietLogger, routerHarness, type RouterHarness } from '../support/router-harness.ts';
import { pngCensus } from './screenshot-check.ts';

const SCREENSHOTS = join(process.cwd(), 'test-results', 'console');
const CHROMIUM = process.env.KUBELOOP_CHROMIUM ?? '/usr/bin/chromium';
const APISERVICE = '/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.history.kubeloop.dev';
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
  await eventually(
    'the history APIService Available',
    async () => (await h.client.request<{ status?: { conditions?: Array<{ type: string; status: string }> } }>({ path: APISERVICE })).status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'),
    90_000,
  );
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

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-console-'));
  await mkdir(SCREENSHOTS, { recursive: true });
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
  browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'], defaultViewport: { width: 1366, height: 900 } });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await tracing?.shutdown();
  await admin?.close();
  await historyApi?.close();
  await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
  await h?.close();
  await plane?.stop();
  await grpc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Saves the page for a reviewer and checks it shows something: several colours, some ink on the background. */
async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(SCREENSHOTS, `${name}.png`);
  const png = await page.screenshot({ path, type: 'png', fullPage: true });
  const census = pngCensus(png);
  expect(census.colours, `${path}: distinct colours`).toBeGreaterThan(8);
  expect(census.inked, `${path}: share of non-background pixels`).toBeGreaterThan(0.01);
  return path;
}

/** Waits until the page's visible text holds every string. */
async function waitForText(page: Page, texts: string[], timeout = 90_000): Promise<void> {
  await page.waitForFunction((wanted: string[]) => wanted.every((t) => document.body.innerText.includes(t)), { timeout, polling: 250 }, texts);
}

async function open(console: OpenConsole, hash: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${console.url}/${hash}`, { waitUntil: 'load' });
  return page;
}

const podSets = () => `/apis/app.kubeloop.dev/v1alpha1/namespaces/${ns}/podsets`;
const pods = async () => (await h.client.request<{ items: V1Pod[] }>({ path: `/api/v1/namespaces/${ns}/pods` })).items.filter((p) => !p.metadata?.deletionTimestamp);

describe('kubeloop console', () => {
  it("shows a PodSet scaled from 3 to 5 in its timeline with its creates and status write, and opens its trace as a waterfall with the function's and the API server's spans", async () => {
    await h.client.request({ method: 'POST', path: podSets(), body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'web' }, spec: { replicas: 3 } } });
    await eventually('3 pods', async () => (await pods()).length === 3, 60_000);
    const scaled = await h.client.request<{ metadata: { resourceVersion: string } }>({ method: 'PATCH', path: `${podSets()}/web`, contentType: 'application/merge-patch+json', body: { spec: { replicas: 5 } } });
    await eventually('5 pods', async () => (await pods()).length === 5, 60_000);
    const trigger = `primary MODIFIED app.kubeloop.dev/v1alpha1/PodSet ${ns}/web rv=${scaled.metadata.resourceVersion}`;

    // From the Loop to the object, as a user finds it.
    const page = await open(admin, '#/loop/podset');
    await page.waitForSelector(`a[href="#/history/podset/${ns}/web"]`, { timeout: 60_000 });
    await page.click(`a[href="#/history/podset/${ns}/web"]`);
    const traceLink = await page.waitForFunction(
      (wanted: string) => {
        const entry = Array.from(document.querySelectorAll<HTMLElement>('.timeline .entry')).find((e) => {
          const text = e.innerText;
          return text.includes(wanted) && (text.match(/applied\s+create v1\/Pod/g) ?? []).length === 2 && /applied\s+status\b/.test(text);
        });
        return entry?.querySelector('a.trace-link')?.getAttribute('href');
      },
      { timeout: 90_000, polling: 500 },
      trigger,
    );
    await screenshot(page, 'podset-timeline');

    // The entry links to its trace: the waterfall has the reconcile, the call and the function's own span.
    const href = (await traceLink.jsonValue()) as string;
    expect(href).toMatch(/^#\/trace\/[0-9a-f]{32}/);
    await page.click(`a.trace-link[href="${href}"]`);
    await page.waitForSelector('.span-row[data-name="reconcile podset"]', { timeout: 60_000 });
    await page.waitForSelector('.span-row[data-name="function podset"]', { timeout: 60_000 });
    await page.waitForFunction(() => document.querySelectorAll('.span-row[data-name^="create v1/Pod"]').length === 2, { timeout: 60_000 });
    // The API server's span of each create, under the write that sent its traceparent.
    await page.waitForFunction(() => document.querySelectorAll('.span-row[data-service="apiserver"]').length >= 2, { timeout: 60_000 });
    // Keyboard: a row opens its details with Enter.
    await page.focus('.span-row[data-name="function podset"]');
    await page.keyboard.press('Enter');
    await waitForText(page, ['function podset', 'kubeloop-e2e']);
    await screenshot(page, 'trace-waterfall');
    await page.close();
  });

  it('shows a Loop whose function is down as Not Ready with the reason, and links it to its failed reconciles', async () => {
    await h.client.request({ method: 'POST', path: `/api/v1/namespaces/${ns}/configmaps`, body: { metadata: { name: 'broken', labels: { console: 'broken' } } } });
    const page = await open(admin, '#/');
    await page.waitForFunction(
      () => {
        const row = document.querySelector<HTMLElement>('tr[data-id="unreachable"]');
        return row !== null && row.innerText.includes('Not Ready') && row.innerText.includes('FunctionUnreachable');
      },
      { timeout: 120_000, polling: 500 },
    );
    // The router's figures are joined in: its failed reconciles are counted as errors.
    await page.waitForFunction(
      () => {
        const cells = Array.from(document.querySelectorAll<HTMLElement>('tr[data-id="unreachable"] td')).map((td) => Number(td.innerText));
        // Kind, Namespace, Ready, versions, Queue, In flight, Reconciles, Errors (the name is the row header).
        return (cells[6] ?? 0) > 0 && (cells[7] ?? 0) > 0;
      },
      { timeout: 60_000, polling: 500 },
    );
    await screenshot(page, 'overview');
    // Keyboard: the Loop's link, then Enter.
    await page.focus('a[href="#/loop/unreachable"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#failures-title ~ ul.links li').length > 0, { timeout: 90_000, polling: 500 });
    await waitForText(page, ['Recent failed reconciles', `${ns}/broken`]);
    // Its objects: only what its selector picks in its namespaces (not every ConfigMap of the cluster).
    expect(await page.$$eval('#objects-title ~ ul.links li', (items) => items.map((li) => (li as HTMLElement).innerText))).toEqual([`${ns}/broken`]);
    await screenshot(page, 'loop-failures');
    await page.close();
  });

  it("shows a user bound only to view in team-a team-a's Loops and not team-b's, and refuses them another namespace's history", async () => {
    const page = await open(viewer, '#/');
    await page.waitForSelector(`tr[data-kind="Loop"][data-id="${teams.a}/team-a-loop"]`, { timeout: 60_000 });
    await waitForText(page, [`Loop in ${teams.b}: not available to you (403)`]);
    expect(await page.$(`tr[data-id="${teams.b}/team-b-loop"]`)).toBeNull();
    expect(await page.$('tr[data-id="podset"]')).toBeNull();
    await screenshot(page, 'viewer-overview');

    await page.goto(`${viewer.url}/#/history/podset/${ns}/web`, { waitUntil: 'load' });
    await waitForText(page, [`The history of ${ns}/web: not available to you (403)`]);
    await screenshot(page, 'viewer-history-refused');
    await page.close();
  });
});
