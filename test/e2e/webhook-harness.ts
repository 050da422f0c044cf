// Shared set-up of the webhook e2e suites: the Watcher CRD, Watchers, kubectl, a webhook gateway started
// in dev mode against the shared control plane, registered for one test namespace only, and the Watcher
// sidecar injector behind it (the watcher-sidecar function and its AdmissionHook).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { parse } from 'yaml';
import { gatewayClientAuthArgs } from '../../cli/cluster/webhook-client-auth.ts';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import watcherSidecar from '../../functions/watcher-sidecar/index.ts';
import { chartCrdFile } from '../../cli/chart-crds.ts';
import { grantHookContext } from '../../cli/dev/sample-admission-hooks.ts';
import { KubeClient, ResourceDiscovery } from '../../lib/kube/index.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { eventually } from '../cluster/eventually.ts';
import { readWebhookConfig } from '../../webhooks/config.ts';
import { startWebhook, type RunningWebhook } from '../../webhooks/run-webhook.ts';
import type { Watcher } from '../../api/watcher.ts';
import type { ClusterSuite } from '../cluster/suite.ts';
import { waitEstablished } from '../cluster/crds-established.ts';

const run = promisify(execFile);
export const WATCHER_CRD = chartCrdFile('watchers.watch.kubeloop.dev.yaml');
/** The control plane is shared: each suite's gateway serves only the hooks labelled with its namespace. */
export const HOOK_SUITE_LABEL = 'kubeloop.dev/test-suite';
export const ADMISSION_HOOK_CRD = chartCrdFile('clusteradmissionhooks.kubeloop.dev.yaml');
export const NAMESPACED_ADMISSION_HOOK_CRD = chartCrdFile('admissionhooks.kubeloop.dev.yaml');

export async function kubectl(suite: ClusterSuite, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(suite.binaries.kubectl, ['--kubeconfig', suite.kubeconfigPath, ...args]);
}

/** The Watcher CRD and the two AdmissionHook CRDs the webhook gateway watches. */
export async function installWatcherCrd(suite: ClusterSuite): Promise<void> {
  await kubectl(suite, 'apply', '--server-side', '--force-conflicts', '-f', WATCHER_CRD, '-f', ADMISSION_HOOK_CRD, '-f', NAMESPACED_ADMISSION_HOOK_CRD);
  await waitEstablished(suite.kubeConfig, ['watchers.watch.kubeloop.dev', 'clusteradmissionhooks.kubeloop.dev', 'admissionhooks.kubeloop.dev']);
}

export async function createWatcher(suite: ClusterSuite, watcher: Watcher): Promise<void> {
  const api = suite.kubeConfig.makeApiClient(CustomObjectsApi);
  await api.createNamespacedCustomObject({
    group: 'watch.kubeloop.dev',
    version: 'v1alpha1',
    namespace: suite.namespace,
    plural: 'watchers',
    body: { apiVersion: 'watch.kubeloop.dev/v1alpha1', kind: 'Watcher', ...watcher },
  });
}

export const logwatch: Watcher = {
  metadata: { name: 'logwatch' },
  spec: {
    container: { name: 'logwatch', image: 'busybox:1.36', args: ['tail', '-f', '/data/log'], volumeMounts: [{ name: 'watch-data', mountPath: '/data' }] },
    volume: { name: 'watch-data', emptyDir: {} },
    configData: { LEVEL: 'debug' },
    imagePullSecrets: { name: 'registry-creds' },
  },
};

export function annotatedPod(name: string, watcher = 'logwatch'): V1Pod {
  return {
    metadata: { name, labels: { app: 'probe' }, annotations: { 'watch.kubeloop.dev/watcher': watcher } },
    spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
  };
}

export interface WebhookUnderTest {
  webhook: RunningWebhook;
  certNamespace: string;
}

export const WATCHER_SIDECAR_HOOK = 'samples/admission-hooks/watcher-sidecar.yaml';

/**
 * The sample AdmissionHook of the Watcher injector for one suite: its own name and label, the given function
 * URL, and a ServiceAccount of the suite's namespace (createWatcherSidecarHook lets it get Watchers).
 */
export async function watcherSidecarHookFor(suite: ClusterSuite, functionUrl: string): Promise<AdmissionHook> {
  const hook = parse(await readFile(WATCHER_SIDECAR_HOOK, 'utf8')) as AdmissionHook;
  hook.metadata = { name: `watcher-sidecar-${suite.namespace}`, labels: { [HOOK_SUITE_LABEL]: suite.namespace } };
  hook.spec!.function = { url: `${functionUrl}/admit` };
  hook.spec!.serviceAccount = { namespace: suite.namespace, name: 'watcher-sidecar-hook' };
  return hook;
}

/** Lets the hook's ServiceAccount get its context kinds, as the chart and `kubeloop dev` do. */
export async function grantHookContextFor(suite: ClusterSuite, hook: AdmissionHook): Promise<void> {
  const client = await KubeClient.fromKubeConfig(suite.kubeConfig);
  try {
    await grantHookContext(client, new ResourceDiscovery(client), hook);
  } finally {
    await client.close();
  }
}

/** Creates the hook (and its context RBAC) and waits until the API server sends this suite's annotated pods through it. */
export async function createWatcherSidecarHook(suite: ClusterSuite, hook: AdmissionHook, watcher = 'logwatch'): Promise<void> {
  await grantHookContextFor(suite, hook);
  const custom = suite.kubeConfig.makeApiClient(CustomObjectsApi);
  await custom.createClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusteradmissionhooks', body: hook });
  const core = suite.kubeConfig.makeApiClient(CoreV1Api);
  // The gateway registers the hook once the Watcher cache has synced; the API server picks the configuration
  // up a moment later: a server-side dry run shows when it is in effect.
  await eventually('the Watcher sidecar hook in effect', async () => {
    const probe = await core.createNamespacedPod({ namespace: suite.namespace, body: annotatedPod(`probe-${Date.now()}`, watcher), dryRun: 'All' });
    return probe.metadata?.annotations?.['watch.kubeloop.dev/injected'] !== undefined;
  });
}

export interface WatcherSidecarUnderTest extends WebhookUnderTest {
  fn: ServedFunction;
  hookName: string;
  /** Stops the gateway and the function, deletes the hook and the certificate namespace. */
  stop(): Promise<void>;
}

/**
 * The gateway (startWebhookFor), the watcher-sidecar function served in this process, and the sample
 * AdmissionHook pointing at it; returns once an annotated pod naming `watcher` (which must exist) is injected.
 */
export async function startWatcherSidecarFor(suite: ClusterSuite, watcher = 'logwatch'): Promise<WatcherSidecarUnderTest> {
  const fn = await serveFunction(watcherSidecar, { port: 0, host: '127.0.0.1', logger: createLogger({ name: 'watcher-sidecar', level: 'warn' }) });
  const under = await startWebhookFor(suite);
  const hook = await watcherSidecarHookFor(suite, fn.url);
  await createWatcherSidecarHook(suite, hook, watcher);
  const hookName = hook.metadata!.name!;
  return {
    ...under,
    fn,
    hookName,
    async stop() {
      await suite.kubeConfig.makeApiClient(CustomObjectsApi).deleteClusterCustomObject({ group: 'kubeloop.dev', version: 'v1alpha1', plural: 'clusteradmissionhooks', name: hookName }).catch(() => undefined);
      await kubectl(suite, 'delete', 'clusterrole,clusterrolebinding', `kubeloop-dev-hook-${hookName}`, '--ignore-not-found');
      await under.webhook.stop({ unregister: true });
      await fn.close();
      // A gateway stopped by the test itself (failure policy) left its configurations behind.
      await kubectl(suite, 'delete', 'mutatingwebhookconfiguration,validatingwebhookconfiguration', `kubeloop-admission-hooks-${suite.namespace}`, '--ignore-not-found');
      await deleteNamespace(suite, under.certNamespace);
    },
  };
}

/**
 * The names and `kubeloop webhook --dev` arguments that confine a webhook to one suite: its certificate
 * Secret lives in its own namespace (kubeloop's namespace is excluded from injection), its hook
 * configurations are named after the suite, and only the suite's namespace is sent to it.
 */
export function devWebhookFor(suite: ClusterSuite): { certNamespace: string; args: string[] } {
  const certNamespace = `${suite.namespace}-kubeloop`;
  const args = [
    '--dev',
    '--port=0',
    '--ops-port=0',
    '--host=127.0.0.1',
    // Only the suite's API server may send reviews (its webhook client certificate): the shared control
    // plane's, or the one a suite started itself.
    ...gatewayClientAuthArgs(suite.clusterDir ?? inject('clusterDir')),
    `--kubeconfig=${suite.kubeconfigPath}`,
    `--namespace=${certNamespace}`,
    `--only-namespace=${suite.namespace}`,
    `--hook-configuration=kubeloop-admission-hooks-${suite.namespace}`,
    `--hook-selector=${HOOK_SUITE_LABEL}=${suite.namespace}`,
  ];
  return { certNamespace, args };
}

/** The client certificate and key a kubeconfig file embeds (the first user's): the cluster admin's, the API server's webhook client. */
export async function clientCertificateOf(kubeconfigPath: string): Promise<{ cert: string; key: string }> {
  const config = parse(await readFile(kubeconfigPath, 'utf8')) as { users: Array<{ user: Record<string, string> }> };
  const user = config.users[0]?.user ?? {};
  const decode = (field: string) => Buffer.from(user[field] ?? '', 'base64').toString('utf8');
  return { cert: decode('client-certificate-data'), key: decode('client-key-data') };
}

/** Starts the webhook in this process (see devWebhookFor), caching the suite's Watchers only. */
export async function startWebhookFor(suite: ClusterSuite, extraArgs: string[] = []): Promise<WebhookUnderTest> {
  const { certNamespace, args } = devWebhookFor(suite);
  const config = readWebhookConfig([...args, `--watch-namespace=${suite.namespace}`, ...extraArgs], {});
  const webhook = await startWebhook(config, { logger: createLogger({ name: 'webhook', level: process.env.KUBELOOP_TEST_LOG_LEVEL === 'debug' ? 'debug' : 'warn' }) });
  return { webhook, certNamespace };
}

export async function deleteNamespace(suite: ClusterSuite, name: string): Promise<void> {
  await suite.kubeConfig.makeApiClient(CoreV1Api).deleteNamespace({ name }).catch(() => undefined);
}
