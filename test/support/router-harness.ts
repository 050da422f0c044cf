// Shared set-up of the router e2e suites: a namespace on the shared control plane, a KubeClient,
// seed functions served over real HTTP by lib/runtime, and routers started with inline Loops.
import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { KubeConfig, KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { parse } from 'yaml';
import { chartCrdFile } from '../../cli/chart-crds.ts';
import { waitForCrdsEstablished } from '../../cli/dev/apply-manifests.ts';
import { loadFunction } from '../../functions/registry.ts';
import { ResourceDiscovery } from '../../lib/kube/discovery.ts';
import { Informer } from '../../lib/kube/informer.ts';
import { KubeClient } from '../../lib/kube/kube-client.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { CLUSTER_LOOP_KIND, LOOP_API_VERSION, type Loop, type LoopCondition, type LoopSpec, type ServiceAccountRef } from '../../api/loop.ts';
import { DEFAULT_FUNCTION_URL_POLICY, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import { startRouter, type Router, type RouterOptions } from '../../router/start-router.ts';
import { createLoopServiceAccount, LOOP_SERVICE_ACCOUNT } from './loop-service-account.ts';
import { setupClusterSuite, type ClusterSuite, type OwnPlane } from '../cluster/suite.ts';

/** Test functions listen on 127.0.0.1: the router's dev-mode URL policy (--allow-loopback-functions). */
export const TEST_URL_POLICY: FunctionUrlPolicy = { ...DEFAULT_FUNCTION_URL_POLICY, allowLoopback: true };

export interface RouterHarness {
  suite: ClusterSuite;
  client: KubeClient;
  /** The suite namespace's Loop ServiceAccount (all rights in the namespace), for Loop objects. */
  loopServiceAccount: ServiceAccountRef;
  /** Serves a registered seed function on a free port. */
  serve(name: string): Promise<ServedFunction>;
  /** Starts a router with inline Loops, or watching Loop objects when `loops` is undefined. */
  router(loops: Loop[] | undefined, extra?: Partial<RouterOptions>): Promise<Router>;
  /** The label selector of this suite's Loop objects (`kubeloop.dev/e2e: <namespace>`), for `router(undefined, ...)`. */
  loopSelector: { matchLabels: Record<string, string> };
  /** Creates a Loop object with this suite's label (deleted again by close()). */
  createLoop(name: string, spec: LoopSpec): Promise<void>;
  /** A Loop object's generations and Ready condition, as the router wrote them. */
  loopStatus(name: string): Promise<{ loop: Loop; ready: LoopCondition | undefined }>;
  close(): Promise<void>;
}

/**
 * An inline Loop limited to one namespace, so suites sharing the control plane never see each other. It
 * runs as the ServiceAccount routerHarness creates in that namespace (all rights there, none elsewhere)
 * unless the spec names another.
 */
export function inlineLoop(name: string, namespace: string, spec: Omit<LoopSpec, 'namespaces'>): Loop {
  return {
    apiVersion: 'kubeloop.dev/v1alpha1',
    kind: 'ClusterLoop',
    metadata: { name, generation: 1 },
    spec: { serviceAccount: { namespace, name: LOOP_SERVICE_ACCOUNT }, ...spec, namespaces: [namespace] },
  };
}

/** The podset seed's Loop (samples/loops/podset.yaml) for one namespace, calling the function at `url`. */
export function podSetLoop(namespace: string, url: string): Loop {
  return inlineLoop('podset', namespace, {
    for: { apiVersion: 'app.kubeloop.dev/v1alpha1', kind: 'PodSet' },
    owns: [{ apiVersion: 'v1', kind: 'Pod' }],
    ignoreStatusChanges: true,
    function: { url },
  });
}

const LOOPS_PATH = '/apis/kubeloop.dev/v1alpha1/clusterloops';

export const quietLogger = () => pino({ level: process.env.KUBELOOP_TEST_LOG_LEVEL ?? 'warn' });

/** A namespace on the shared control plane, or on `plane` (one the suite started itself). */
export async function routerHarness(suiteName: string, plane?: OwnPlane): Promise<RouterHarness> {
  const suite = await setupClusterSuite(suiteName, plane);
  const client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  const loopServiceAccount = await createLoopServiceAccount(client, { namespace: suite.namespace });
  const loopSelector = { matchLabels: { 'kubeloop.dev/e2e': suite.namespace } };
  const closers: Array<() => Promise<void>> = [];
  return {
    suite,
    client,
    loopServiceAccount,
    async serve(name) {
      const served = await serveFunction(await loadFunction(name), { port: 0, host: '127.0.0.1', logLevel: 'warn' });
      closers.push(() => served.close());
      return served;
    },
    async router(loops, extra = {}) {
      const router = await startRouter({ kubeConfig: suite.kubeConfig, ...(loops ? { loops } : {}), logger: quietLogger(), urlPolicy: TEST_URL_POLICY, ...extra });
      closers.push(() => router.stop());
      return router;
    },
    loopSelector,
    async createLoop(name, spec) {
      await client.request({ method: 'POST', path: LOOPS_PATH, body: { apiVersion: LOOP_API_VERSION, kind: CLUSTER_LOOP_KIND, metadata: { name, labels: loopSelector.matchLabels }, spec } });
    },
    async loopStatus(name) {
      const loop = await client.request<Loop>({ path: `${LOOPS_PATH}/${name}` });
      return { loop, ready: loop.status?.conditions?.find((c) => c.type === 'Ready') };
    },
    async close() {
      for (const close of closers.reverse()) await close().catch(() => {});
      await client.request({ method: 'DELETE', path: LOOPS_PATH, query: { labelSelector: `kubeloop.dev/e2e=${suite.namespace}` } }).catch(() => {});
      await client.close();
      await suite.cleanup();
    },
  };
}

/** Installs the chart's CRDs (cli/chart-crds.ts; server-side apply, idempotent across suites) and waits until served. */
export async function installCrds(client: KubeClient, files: Array<string | TestCrd>): Promise<void> {
  for (const file of files) {
    // A bare name is one of the chart's CRDs; an absolute path is read as it is (CRDs from Go modules).
    const crd = typeof file !== 'string' ? file : (parse(readFileSync(isAbsolute(file) ? file : chartCrdFile(file), 'utf8')) as TestCrd);
    await client.request({
      method: 'PATCH',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      query: { fieldManager: 'kubeloop-e2e', force: true },
      contentType: 'application/apply-patch+yaml',
      body: crd,
    });
    await waitForCrdsEstablished(client, [crd.metadata.name], 60_000);
  }
}

export interface TestCrd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: unknown;
}

/** A namespaced kind of one served version (v1) whose objects may hold any fields: a test's own kind, for installCrds. */
export function looseCrd(group: string, kind: string, plural: string): TestCrd {
  const names = { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` };
  const version = { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } };
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${group}` }, spec: { group, scope: 'Namespaced', names, versions: [version] } };
}

/** A synced informer on the suite's pods: what a watch observed, for assertions about every moment. */
export function watchPods(client: KubeClient, namespace: string): Promise<Informer<V1Pod>> {
  return watchKind<V1Pod>(client, namespace, 'v1', 'Pod');
}

/** A synced informer on one kind in the suite's namespace. */
export async function watchKind<T extends KubernetesObject>(client: KubeClient, namespace: string, apiVersion: string, kind: string): Promise<Informer<T>> {
  const objects = new Informer<T>({ client, resource: await new ResourceDiscovery(client).resolve(apiVersion, kind), namespace });
  objects.start();
  await objects.waitForSync();
  return objects;
}

export type { KubeConfig };
