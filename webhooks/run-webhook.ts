// Starts the whole webhook gateway from its config: Kubernetes client, certificates (Secret-backed
// rotation or mounted files), the HTTPS server and the AdmissionHooks it serves (in dev mode registered at
// https://127.0.0.1:<port>). Used by `kubeloop webhook`, `kubeloop dev`, the e2e tests and the bench.
import { readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { watchCertificateFiles } from '../certs/file-certificate.ts';
import type { KeyPairPem } from '../certs/generate.ts';
import { CertificateRotator } from '../certs/rotation.ts';
import { isApiError, KubeClient, loadKubeConfig, ResourceDiscovery, UnknownKindError } from '../lib/kube/index.ts';
import { ADMISSION_HOOK_API_VERSION, ADMISSION_HOOK_KIND, CLUSTER_ADMISSION_HOOK_KIND } from '../api/admission-hook.ts';
import type { Registry } from 'prom-client';
import { createLogger, type Logger } from '../lib/observability/logger.ts';
import { counter, createMetricsRegistry } from '../lib/observability/metrics.ts';
import { listen } from '../lib/server/index.ts';
import type { ClientAuthentication } from './gateway/api-server-authentication.ts';
import type { WebhookConfig } from './config.ts';
import type { HookConfigurationOptions } from './lifecycle/hook-configuration.ts';
import { createWebhookServer, type WebhookServer } from './server.ts';
import { ContextCache } from './gateway/context-cache.ts';
import { FunctionCaller } from './gateway/function-caller.ts';
import { HookSigningKeys } from './base/hook-signing-keys.ts';
import { operatorDenied } from '../lib/function-client/address-policy.ts';
import { clusterAddressGuard, type ApiServerEndpoints } from '../lib/function-client/cluster-addresses.ts';
import { serviceAddressResolver } from '../lib/function-client/service-address.ts';
import { HookController } from './lifecycle/hook-controller.ts';
import { excludedIdentitiesCondition } from './base/excluded-identities.ts';
import type { AdmissionHistory } from './gateway/admission-history.ts';
import { admissionHistoryOf, startGatewayAdmissionHistoryApi } from './admission-history-settings.ts';

export interface RunningWebhook {
  /** https://127.0.0.1:<port> */
  url: string;
  /** http://127.0.0.1:<ops port>: /healthz, /readyz, /metrics. */
  opsUrl: string;
  server: WebhookServer;
  /** Present with self-managed certificates. */
  rotator?: CertificateRotator;
  /** The AdmissionHooks served at /admit/<hook>. */
  hooks: HookController;
  client: KubeClient;
  /** Stops serving; in dev mode `unregister` also empties the hook configurations it wrote. */
  stop(options?: { unregister?: boolean }): Promise<void>;
}

export interface StartDependencies {
  logger?: Logger;
  kubeConfig?: KubeConfig;
}

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  try {
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  } catch (error) {
    // 403: a gateway that may not create namespaces (kubeloop dev runs it as the chart's ServiceAccount) finds
    // its namespace made by whoever started it; if not, its certificate Secret's create fails naming it.
    if (!isApiError(error, 409) && !isApiError(error, 403)) throw error;
  }
}

async function waitForCache(synced: Promise<void>, what: string, crd: string, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the ${what} cache did not sync within ${timeoutMs / 1000}s: is the ${crd} CRD installed?`)), timeoutMs);
  });
  try {
    await Promise.race([synced, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function hasKind(client: KubeClient, kind: string): Promise<boolean> {
  try {
    await new ResourceDiscovery(client).resolve(ADMISSION_HOOK_API_VERSION, kind);
    return true;
  } catch (error) {
    if (error instanceof UnknownKindError) return false;
    throw error;
  }
}

interface ServingCertificates {
  serving: KeyPairPem;
  /** Present with self-managed certificates. */
  rotator?: CertificateRotator;
  stop(): Promise<void> | void;
}

/** Mounted files polled for changes, or a Secret-backed CA and serving pair kept fresh by the rotator. */
async function startCertificates(config: WebhookConfig, client: KubeClient, logger: Logger, onChanged: (pair: KeyPairPem) => void): Promise<ServingCertificates> {
  if (config.certificates === 'files') {
    const files = await watchCertificateFiles({
      certFile: config.tlsCertFile ?? '',
      keyFile: config.tlsKeyFile ?? '',
      pollIntervalMs: Math.min(config.certCheckIntervalSeconds * 1000, 60_000),
      logger,
      onChanged,
    });
    return { serving: files.serving, stop: files.stop };
  }
  if (config.dev) await ensureNamespace(client, config.namespace);
  const rotator = new CertificateRotator({
    client,
    secret: { namespace: config.namespace, name: config.secretName },
    identity: { service: config.service, namespace: config.namespace },
    ...(config.configurationName ? { configurationName: config.configurationName } : {}),
    checkIntervalMs: config.certCheckIntervalSeconds * 1000,
    logger: logger.child({ component: 'certificates' }),
  });
  rotator.onServingChanged(onChanged);
  const bundle = await rotator.start();
  return { serving: bundle.serving, rotator, stop: () => rotator.stop() };
}

/** What the AdmissionHook side learns after it is built: where it is served, whether, and how it stops. */
interface HookState {
  // The port is known only after listen(): the controller reads the target when it first writes.
  target: HookConfigurationOptions['target'];
  served: boolean;
  unregistering: boolean;
}

interface AdmissionGateway {
  /** The CA the hook configurations trust, once the rotator reported a change (before it adopts the bundle). */
  trust: { caPem?: string };
  /** Served on /metrics; made first so the context cache can count what it refuses. */
  metrics: Registry;
  contexts: ContextCache;
  caller: FunctionCaller;
  signingKeys: HookSigningKeys;
  /** The API server's addresses, refused to function calls; started before the first admission. */
  apiServer: ApiServerEndpoints;
  hooks: HookController;
  state: HookState;
  admissions: AdmissionHistory | undefined;
}

function createGateway(config: WebhookConfig, client: KubeClient, logger: Logger, rotator: CertificateRotator | undefined): AdmissionGateway {
  const metrics = createMetricsRegistry();
  const refused = counter<'kind'>(metrics, 'kubeloop_admission_context_objects_refused_total', 'Context objects over --max-object-values, never cached (sent as null)', ['kind']);
  const contextLogger = logger.child({ component: 'context-cache' });
  // A cache synced for the first time turns its hooks' ContextPending into Registered (or says why it cannot).
  const synced = { onChanged: () => {} };
  const contexts = new ContextCache(client, {
    logger: contextLogger,
    ...(config.watchNamespace ? { watchNamespace: config.watchNamespace } : {}),
    maxValues: config.maxObjectValues,
    onRefused: (kind, object) => {
      refused.inc({ kind });
      contextLogger.warn({ kind, name: object.metadata?.name, namespace: object.metadata?.namespace, maxValues: config.maxObjectValues }, 'context object over --max-object-values: not cached, sent as null');
    },
    onChanged: () => synced.onChanged(),
  });
  // Admission functions are reached through the same address checks as reconcile functions; loopback only
  // where the URL policy allows it (--dev, --allow-loopback-functions).
  const { guard, apiServer } = clusterAddressGuard({
    client,
    clusterDomain: config.urlPolicy.clusterDomain,
    allowLoopback: config.urlPolicy.allowLoopback,
    denied: operatorDenied(config.deniedNetworks, config.deniedLoopbackPorts),
    ...(config.connectServicesTo ? { resolve: serviceAddressResolver({ clusterDomain: config.urlPolicy.clusterDomain, address: config.connectServicesTo }) } : {}),
  });
  const caller = new FunctionCaller({ addressGuard: guard });
  const signingKeys = new HookSigningKeys(client);
  const state: HookState = { target: { service: { name: config.service, namespace: config.namespace } }, served: false, unregistering: false };
  const trust: AdmissionGateway['trust'] = {};
  const namespacedCondition = excludedIdentitiesCondition(config.tenantHooks.excludedIdentities);
  const hooks = new HookController({
    client,
    logger,
    contexts,
    configuration: {
      name: config.hookConfigurationName,
      get target() {
        return state.target;
      },
      kubeloopNamespace: config.namespace,
      onlyNamespaces: config.onlyNamespaces,
      excludedNamespaces: config.excludedNamespaces,
      ...(namespacedCondition ? { namespacedCondition } : {}),
    },
    caBundle: () => trust.caPem ?? rotator?.bundle.ca.certPem,
    ...(config.hookSelector ? { labelSelector: config.hookSelector } : {}),
    policy: {
      urlPolicy: config.urlPolicy,
      allowedResources: config.hookAllowedResources,
      namespacedMaxTimeoutSeconds: config.tenantHooks.namespacedMaxTimeoutSeconds,
      maxEntryBytes: config.maxHookEntryBytes,
    },
    ...(config.accessReviewSeconds !== undefined ? { accessReviewIntervalMs: config.accessReviewSeconds * 1000 } : {}),
    watchChanges: true,
    tenantConfigurations: { buckets: config.tenantConfigurations, maxBytes: config.maxConfigurationBytes },
    tenantMaxHooks: config.tenantHooks.tenantMaxHooks,
    metrics,
  });
  synced.onChanged = () => void hooks.schedule();
  return { trust, metrics, contexts, caller, signingKeys, apiServer, hooks, state, admissions: admissionHistoryOf(config.admissionHistory) };
}

/** --client-ca-file read once at start: a missing or empty file is a start-up error naming the flag. */
async function readClientAuthentication(config: WebhookConfig): Promise<ClientAuthentication | undefined> {
  if (!config.clientCaFile) return undefined;
  let caPem: string;
  try {
    caPem = await readFile(config.clientCaFile, 'utf8');
  } catch (error) {
    throw new Error(`--client-ca-file: cannot read ${config.clientCaFile}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (!caPem.includes('BEGIN CERTIFICATE')) throw new Error(`--client-ca-file: ${config.clientCaFile} holds no PEM certificate`);
  return { caPem, names: config.clientNames };
}

function createServer(config: WebhookConfig, logger: Logger, serving: KeyPairPem, gateway: AdmissionGateway, clientAuth: ClientAuthentication | undefined): WebhookServer {
  const { hooks, contexts, caller, signingKeys, state, metrics } = gateway;
  return createWebhookServer({
    logger,
    serving,
    metrics,
    ...(clientAuth ? { clientAuth } : {}),
    bodyLimitBytes: config.bodyLimitBytes,
    ready: () => !state.served || hooks.synced,
    gateway: {
      hooks: () => hooks.served.byId,
      groups: () => hooks.served.groups,
      tenantMaxInFlight: config.tenantMaxInFlight,
      maxContextBytes: config.maxContextBytes,
      maxInFlightRequestBytes: config.maxInFlightRequestBytes,
      ...(config.tenantHooks.breakerThreshold > 0 ? { breaker: { threshold: config.tenantHooks.breakerThreshold, coolDownMs: config.tenantHooks.breakerCoolDownSeconds * 1000 } } : {}),
      contexts,
      caller,
      signingKeys: (hook) => signingKeys.get(hook.spec.function?.signingSecretRef),
      reportCall: (hook, failure) => hooks.reportCall(hook, failure),
      reportCondition: (hook, condition) => hooks.reportCondition(hook, condition),
      versionKeys: (ref) => signingKeys.get(ref),
      ...(config.recordDir ? { recordDir: config.recordDir } : {}),
      ...(gateway.admissions ? { admissions: gateway.admissions } : {}),
    },
  });
}

// In the cluster the chart installs the CRD; readiness waits for the hooks. Dev mode fails fast instead.
// Without the AdmissionHook CRD (an older chart, a bare `kubeloop webhook --dev`) the gateway serves
// nothing but health; with it, dev mode waits for the hooks so they are registered once we return.
async function serveAdmissionHooks(config: WebhookConfig, client: KubeClient, logger: Logger, gateway: AdmissionGateway): Promise<void> {
  gateway.state.served = await hasKind(client, CLUSTER_ADMISSION_HOOK_KIND);
  if (gateway.state.served) {
    const namespaced = await hasKind(client, ADMISSION_HOOK_KIND);
    if (!namespaced) logger.warn('the admissionhooks.kubeloop.dev CRD is not installed: namespaced AdmissionHooks are not served (install the chart CRDs)');
    const hooksStarted = gateway.hooks.start({ namespaced });
    hooksStarted.catch((error: unknown) => logger.error({ err: error }, 'AdmissionHooks not started'));
    if (config.dev) await waitForCache(hooksStarted, 'ClusterAdmissionHook', 'clusteradmissionhooks.kubeloop.dev', 30_000);
  } else {
    logger.warn('the clusteradmissionhooks.kubeloop.dev CRD is not installed: ClusterAdmissionHooks are not served (install the chart CRDs)');
  }
}

/** Stops in reverse order of start; idempotent, since a signal handler and the embedding code may both stop it. */
function stopOnce(config: WebhookConfig, client: KubeClient, server: WebhookServer, state: HookState, stops: Array<() => Promise<void> | void>): RunningWebhook['stop'] {
  let stopping: Promise<void> | undefined;
  return (options = {}) => {
    stopping ??= (async () => {
      state.unregistering = options.unregister === true;
      server.beginClosing();
      // closeOnSignals may already have closed it.
      if (server.app.server.listening) await server.app.close();
      if (server.ops.app.server.listening) await server.ops.app.close();
      for (const stop of stops.reverse()) await stop();
      await client.close();
    })();
    return stopping;
  };
}

export async function startWebhook(config: WebhookConfig, deps: StartDependencies = {}): Promise<RunningWebhook> {
  const logger = deps.logger ?? createLogger({ name: 'webhook', level: config.logLevel });
  const kubeConfig = deps.kubeConfig ?? (await loadKubeConfig(config.kubeconfig ? { kubeconfig: config.kubeconfig } : {}));
  const clientAuth = await readClientAuthentication(config);
  const client = await KubeClient.fromKubeConfig(kubeConfig);
  let onServingChanged: (pair: KeyPairPem) => void = () => {};
  const certificates = await startCertificates(config, client, logger, (pair) => onServingChanged(pair));
  const { rotator } = certificates;
  const stops: Array<() => Promise<void> | void> = [() => certificates.stop()];

  const gateway = createGateway(config, client, logger, rotator);
  await gateway.apiServer.start();
  stops.push(() => gateway.apiServer.stop());
  const { hooks, state } = gateway;
  const server = createServer(config, logger, certificates.serving, gateway, clientAuth);
  onServingChanged = (pair) => {
    server.setServingCertificate(pair);
    // A renewal may come with a new CA: rewrite the hook configurations once the rotator holds it.
    setImmediate(() => void hooks.schedule());
  };
  // A new CA (a roll) or one dropped after its overlap (certs rotate --ca): the hook configurations are
  // rewritten with it before the rotator swaps in a certificate it signed (it awaits this).
  rotator?.onCaChanged(async (caPem) => {
    gateway.trust.caPem = caPem;
    await hooks.schedule();
  });
  const url = await listen(server.app, { port: config.port, host: config.host });
  const opsUrl = await listen(server.ops.app, { port: config.opsPort, host: config.host });
  const port = new URL(url).port;
  // The API server dials the URL itself, so 127.0.0.1 whatever interface we listen on.
  if (config.dev) state.target = { urlBase: `https://127.0.0.1:${port}` };
  else if (config.advertiseUrl) state.target = { urlBase: config.advertiseUrl };
  await serveAdmissionHooks(config, client, logger, gateway);
  const admissionHistoryApi = await startGatewayAdmissionHistoryApi(config.admissionHistory, gateway.admissions, kubeConfig, logger, config.host);
  if (admissionHistoryApi) stops.push(admissionHistoryApi.close);
  stops.push(async () => {
    await hooks.stop({ unregister: config.dev && state.unregistering });
    await gateway.contexts.stop();
    await gateway.caller.close();
  });
  logger.info({ url, opsUrl, apiServerClientCertificate: clientAuth ? { caFile: config.clientCaFile, names: clientAuth.names } : 'not required', hookConfiguration: config.hookConfigurationName, dev: config.dev, certificates: config.certificates }, 'webhook serving');

  return { url, opsUrl, server, ...(rotator ? { rotator } : {}), hooks, client, stop: stopOnce(config, client, server, state, stops) };
}
