// Tracing against the real backend: its own control plane whose kube-apiserver exports its spans to a real
// Jaeger v2 (built from the Go module proxy, cached), and the router, the podset function, the webhook
// gateway and the watcher-sidecar function exporting OTLP to the same Jaeger. Traces are read back through
// Jaeger's query API, as a user would find them, and in `kubeloop console --jaeger` in headless Chromium.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../cli/cluster/index.ts';
import { ensureJaeger, startJaeger, type RunningJaeger } from '../../cli/cluster/jaeger.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { startTracing, type Tracing } from '../../lib/observability/tracing.ts';
import type { Router } from '../../router/start-router.ts';
import { startRouter } from '../../router/start-router.ts';
import { eventually } from '../cluster/eventually.ts';
import { createLoopServiceAccount } from '../support/loop-service-account.ts';
import { namespaceFor, type ClusterSuite } from '../cluster/suite.ts';
import { installCrds, podSetLoop, quietLogger, TEST_URL_POLICY } from '../support/router-harness.ts';
import { annotatedPod, createWatcher, installWatcherCrd, logwatch, startWatcherSidecarFor, type WatcherSidecarUnderTest } from './webhook-harness.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { loadFunction } from '../../functions/registry.ts';
import { openConsole } from '../../cli/console/open-console.ts';
import { launchBrowser, screenshot, waitForText } from './console-browser.ts';

const SERVICE = 'kubeloop-e2e';

interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: string; spanID: string }>;
  processID: string;
  tags: Array<{ key: string; value: unknown }>;
  logs: Array<{ fields: Array<{ key: string; value: unknown }> }>;
}
interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string }>;
}

let dir: string;
let jaeger: RunningJaeger;
let tracing: Tracing;
let plane: ControlPlane;
let client: KubeClient;
let suite: ClusterSuite;
let fn: ServedFunction;
let router: Router;
let sidecar: WatcherSidecarUnderTest;

const log = (line: string): void => void process.stderr.write(`[tracing] ${line}\n`);
// A cold Jaeger build takes many minutes (cached afterwards), like Knative's webhook in chart-knative.test.ts.
beforeAll(async () => void (await ensureJaeger(log)), 45 * 60_000);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeloop-tracing-'));
  jaeger = await startJaeger(join(dir, 'jaeger'), log);
  tracing = await startTracing({ otlpEndpoint: jaeger.otlpHttpEndpoint, otlpHeaders: {}, samplingRatio: 1 }, SERVICE);
  plane = await startControlPlane({ nodes: 1, apiserverTracing: { otlpGrpcEndpoint: jaeger.otlpGrpcEndpoint }, onProgress: log });
  const kubeConfig: KubeConfig = plane.kubeConfig();
  const namespace = namespaceFor('tracing');
  suite = { kubeConfig, kubeconfigPath: plane.kubeconfigPath, server: plane.server, namespace, binaries: plane.binaries, clusterDir: plane.dir, cleanup: async () => {} };
  client = await KubeClient.fromKubeConfig(kubeConfig);
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { metadata: { name: namespace } } });
  await eventually('the default ServiceAccount', () => client.request({ path: `/api/v1/namespaces/${namespace}/serviceaccounts/default` }));
  await createLoopServiceAccount(client, { namespace });
  await installCrds(client, ['podsets.app.kubeloop.dev.yaml']);
  await installWatcherCrd(suite);
  fn = await serveFunction(await loadFunction('podset'), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
  router = await startRouter({ kubeConfig, loops: [podSetLoop(namespace, fn.url)], logger: quietLogger(), urlPolicy: TEST_URL_POLICY });
  await router.waitForLoop('podset');
  await createWatcher(suite, logwatch);
  sidecar = await startWatcherSidecarFor(suite);
});

afterAll(async () => {
  await sidecar?.stop().catch(() => {});
  await router?.stop();
  await fn?.close();
  await client?.close();
  await tracing?.shutdown();
  await plane?.stop();
  await jaeger?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Traces of kubeloop's service with this operation and tags, through Jaeger's query API. */
async function findTraces(operation: string, tags: Record<string, string>): Promise<JaegerTrace[]> {
  const query = new URLSearchParams({ service: SERVICE, operation, tags: JSON.stringify(tags), limit: '100', lookback: '1h' });
  const reply = await fetch(`${jaeger.queryUrl}/api/traces?${query}`);
  if (!reply.ok) throw new Error(`Jaeger query: HTTP ${reply.status} ${await reply.text()}`);
  return ((await reply.json()) as { data: JaegerTrace[] | null }).data ?? [];
}

const tag = (span: JaegerSpan | undefined, key: string) => span?.tags.find((t) => t.key === key)?.value;
const parentOf = (span: JaegerSpan | undefined) => span?.references.find((r) => r.refType === 'CHILD_OF')?.spanID;
/** The watch events logged on a reconcile's root span, as field maps. */
const watchEventsOf = (span: JaegerSpan | undefined) => (span?.logs ?? []).map((l) => Object.fromEntries(l.fields.map((f) => [f.key, f.value]))).filter((e) => e.event === 'watch event');

const podSets = () => `/apis/app.kubeloop.dev/v1alpha1/namespaces/${suite.namespace}/podsets`;

describe('a PodSet scale-up as one trace', () => {
  it('shows watch event -> queue -> call -> function -> create writes, triggered by the PodSet update', async () => {
    await client.request({ method: 'POST', path: podSets(), body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'web' }, spec: { replicas: 1 } } });
    await eventually('1 pod', async () => (await client.request<{ items: V1Pod[] }>({ path: `/api/v1/namespaces/${suite.namespace}/pods` })).items.length === 1, 60_000);
    const scaled = await client.request<{ metadata: { resourceVersion: string } }>({
      method: 'PATCH',
      path: `${podSets()}/web`,
      contentType: 'application/merge-patch+json',
      body: { spec: { replicas: 3 } },
    });
    const rv = scaled.metadata.resourceVersion;
    // The reconcile of the update: its watch event is on the root span, with the informer it came from and its
    // resourceVersion. Its trigger tag names the update, or a pod's later event the queue merged into the same
    // entry while it waited (a kwok status write): the key is reconciled once for both, as controller-runtime does.
    const fromUpdate = (t: JaegerTrace) => watchEventsOf(t.spans.find((s) => s.operationName === 'reconcile podset')).some((e) => e['kubeloop.trigger.source'] === 'primary' && e['k8s.resource_version'] === rv);
    const trace = await eventually(
      'the scale-up trace in Jaeger, with its two creates',
      async () => (await findTraces('reconcile podset', {})).find((t) => fromUpdate(t) && t.spans.filter((s) => s.operationName.startsWith('create v1/Pod')).length === 2),
      60_000,
    );
    const byName = (name: string) => trace.spans.find((s) => s.operationName === name);
    const root = byName('reconcile podset');
    expect(parentOf(root)).toBeUndefined();
    const events = watchEventsOf(root);
    expect(events).toContainEqual(expect.objectContaining({ 'kubeloop.trigger.source': 'primary', 'k8s.resource_version': rv }));
    expect(tag(root, 'kubeloop.trigger'), JSON.stringify(events)).toMatch(new RegExp(`^(primary MODIFIED app.kubeloop.dev/v1alpha1/PodSet ${suite.namespace}/web rv=${rv}|child MODIFIED v1/Pod ${suite.namespace}/web-pod-\\S+ rv=\\d+)$`));
    expect(parentOf(byName('queue'))).toBe(root!.spanID);
    const call = byName('call podset');
    expect(parentOf(call)).toBe(root!.spanID);
    const fnSpan = byName('function podset');
    expect(parentOf(fnSpan)).toBe(call!.spanID);
    const creates = trace.spans.filter((s) => s.operationName.startsWith('create v1/Pod'));
    for (const create of creates) {
      expect(parentOf(create)).toBe(root!.spanID);
      expect(tag(create, 'kubeloop.write.result')).toBe('applied');
    }
    // The API server continues each write: its spans for the POST nest under the write span.
    await eventually('the API server spans under the creates', async () => {
      const full = (await findTraces('reconcile podset', {})).find((t) => t.traceID === trace.traceID);
      const apiserverParents = new Set(full?.spans.filter((s) => full.processes[s.processID]?.serviceName === 'apiserver').map(parentOf));
      return creates.every((c) => apiserverParents.has(c.spanID));
    }, 60_000);
    expect(tag(byName('decide'), 'kubeloop.outcome')).toBe('ok');
  });
});

describe('an admission as one trace with the API server', () => {
  it('has the API server span as parent of the gateway span', async () => {
    const core = suite.kubeConfig.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedPod({ namespace: suite.namespace, body: annotatedPod('traced') });
    expect(created.metadata?.annotations?.['watch.kubeloop.dev/injected']).toBeDefined();
    const trace = await eventually(
      'the admission trace in Jaeger, with the API server spans',
      async () => {
        const found = await findTraces(`admit ${sidecar.hookName}`, { 'k8s.object': `${suite.namespace}/traced` });
        return found.find((t) => Object.values(t.processes).some((p) => p.serviceName === 'apiserver'));
      },
      60_000,
    );
    const gateway = trace.spans.find((s) => s.operationName === `admit ${sidecar.hookName}`)!;
    const parent = trace.spans.find((s) => s.spanID === parentOf(gateway));
    expect(parent && trace.processes[parent.processID]?.serviceName).toBe('apiserver');
    const call = trace.spans.find((s) => s.operationName === `call ${sidecar.hookName}`);
    expect(parentOf(call)).toBe(gateway.spanID);
    expect(parentOf(trace.spans.find((s) => s.operationName === 'context lookup'))).toBe(gateway.spanID);
    expect(parentOf(trace.spans.find((s) => s.operationName === 'function watcher-sidecar'))).toBe(call!.spanID);
  });
});

describe('the console against Jaeger', () => {
  it("shows a reconcile's trace read from Jaeger's query API as a waterfall, with the function's and the API server's spans", async () => {
    const opened = await openConsole({ kubeconfig: plane.kubeconfigPath, jaeger: jaeger.queryUrl });
    const browser = await launchBrowser();
    try {
      await client.request({ method: 'POST', path: podSets(), body: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet', metadata: { name: 'console' }, spec: { replicas: 1 } } });
      const ownPods = async () => (await client.request<{ items: V1Pod[] }>({ path: `/api/v1/namespaces/${suite.namespace}/pods` })).items.filter((p) => p.metadata?.ownerReferences?.[0]?.name === 'console');
      await eventually('1 pod of PodSet console', async () => (await ownPods()).length === 1, 60_000);
      const scaled = await client.request<{ metadata: { resourceVersion: string } }>({ method: 'PATCH', path: `${podSets()}/console`, contentType: 'application/merge-patch+json', body: { spec: { replicas: 2 } } });
      const trigger = `primary MODIFIED app.kubeloop.dev/v1alpha1/PodSet ${suite.namespace}/console rv=${scaled.metadata.resourceVersion}`;
      const [found] = await eventually('the scale-up trace in Jaeger', async () => {
        const traces = await findTraces('reconcile podset', { 'kubeloop.trigger': trigger });
        return traces.length > 0 && traces;
      }, 60_000);

      // What a user does with a trace id from `kubeloop history` or a log line: open it in the console.
      const page = await browser.newPage();
      await page.goto(`${opened.url}/#/trace/${found!.traceID}`, { waitUntil: 'load' });
      await page.waitForSelector('.span-row[data-name="reconcile podset"]', { timeout: 60_000 });
      await page.waitForSelector('.span-row[data-name="function podset"]', { timeout: 60_000 });
      await page.waitForSelector('.span-row[data-name^="create v1/Pod"]', { timeout: 60_000 });
      // The API server's spans reach Jaeger on their own schedule; the page refreshes until they are in.
      await page.waitForSelector('.span-row[data-service="apiserver"]', { timeout: 60_000 });
      await waitForText(page, [`from Jaeger at ${jaeger.queryUrl}`]);
      await page.click('.span-row[data-name="function podset"]');
      await waitForText(page, ['function podset', SERVICE]);
      await screenshot(page, 'jaeger-trace-waterfall');
      await page.close();
    } finally {
      await browser.close();
      await opened.close();
    }
  });
});
