// Configuration of `kubeloop webhook`: flags win over environment variables; every value is checked
// at start-up and a bad one is reported with the flag or variable that set it.
import { parseArgs } from 'node:util';
import { FUNCTION_URL_FLAG_OPTIONS, FUNCTION_URL_USAGE, readFunctionUrlPolicy, type FunctionUrlPolicy } from '../lib/config/function-url-policy.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../lib/contract/json-depth.ts';
import { pickSetting, settingInteger, settingOneOf, type Setting } from '../lib/config/settings.ts';
import { readServerSettings, SERVER_FLAG_OPTIONS, TRACING_USAGE, type ServerSettings } from '../lib/server/server-settings.ts';
import { readDeniedLoopbackPorts, readDeniedNetworks } from '../lib/function-client/address-policy.ts';
import { parseServiceAddresses } from '../lib/function-client/service-address.ts';
import { DEFAULT_HOOK_CONFIGURATION_NAME } from './lifecycle/hook-configuration.ts';
import { parseSensitiveCategories, SENSITIVE_CATEGORIES, type SensitiveCategory } from './base/sensitive-resources.ts';
import { DEFAULT_TENANT_MAX_IN_FLIGHT } from './gateway/tenant-limiter.ts';
import { DEFAULT_MAX_CONTEXT_BYTES } from './gateway/context-cache.ts';
import { DEFAULT_MAX_HOOK_ENTRY_BYTES } from './base/hook-bounds.ts';
import { checkConfigurationName, DEFAULT_MAX_CONFIGURATION_BYTES, DEFAULT_TENANT_CONFIGURATIONS } from './lifecycle/hook-configuration-shards.ts';
import { DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES } from './gateway/request-byte-budget.ts';
import { readTenantHookSettings, TENANT_HOOK_FLAG_OPTIONS, TENANT_HOOK_USAGE, type TenantHookSettings } from './tenant-hook-settings.ts';
import { ADMISSION_HISTORY_FLAG_OPTIONS, ADMISSION_HISTORY_USAGE, readAdmissionHistorySettings, type AdmissionHistorySettings } from './admission-history-settings.ts';

/** The admission port's default (the chart's Service targets it). */
export const DEFAULT_WEBHOOK_PORT = 8443;

/**
 * 2 MiB: an AdmissionReview of a pod CREATE holds one object, and the API server stores at most 1.5 MiB
 * per object; with the 10 s request timeout a few dozen slow senders stay far below a 256 Mi limit.
 */
export const WEBHOOK_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/**
 * self-managed: CA and serving certificate in a Secret, rotated by the webhook, caBundle injected.
 * files: a certificate mounted from a Secret that cert-manager keeps (reloaded when it changes).
 */
export type CertificateMode = 'self-managed' | 'files';

/** Plain HTTP /healthz, /readyz, /metrics: probes and Prometheus cannot present the API server's certificate. */
export const DEFAULT_WEBHOOK_OPS_PORT = 8082;

export interface WebhookConfig extends ServerSettings {
  /** The ops server's port (0: any free one). */
  opsPort: number;
  /** Accept admission reviews only from a client certificate this CA file signed (the API server's). */
  clientCaFile?: string;
  /** ...and only with one of these common names (empty: any the CA signed). */
  clientNames: string[];
  kubeconfig?: string;
  /** kubeloop's namespace: holds the certificate Secret and is never sent to the webhook. */
  namespace: string;
  service: string;
  secretName: string;
  /** A MutatingWebhookConfiguration of the user's own whose caBundle the rotator keeps (the hooks' are kept by the gateway). */
  configurationName?: string;
  certificates: CertificateMode;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  certCheckIntervalSeconds: number;
  /**
   * Dev mode: register the hooks with url https://127.0.0.1:<port>/admit/<hook> (how a local API server
   * reaches a gateway running outside the cluster), and make the certificate namespace if missing.
   */
  dev: boolean;
  /** Outside dev mode: the URL base the API server reaches the gateway at instead of its Service. */
  advertiseUrl?: string;
  /** Dev mode and tests: only objects in these namespaces are sent to the gateway. */
  onlyNamespaces: string[];
  /** Never sent to any hook, besides kube-system and kubeloop's namespace (the chart: kube-public, kube-node-lease). */
  excludedNamespaces: string[];
  /** Cache context objects of one namespace only (tests); all namespaces by default. */
  watchNamespace?: string;
  /** The Mutating- and ValidatingWebhookConfiguration the AdmissionHook gateway owns. */
  hookConfigurationName: string;
  /** Serve only AdmissionHooks matching this label selector (several gateways, tests). */
  hookSelector?: string;
  /** Write every admission function call as a fixture into this folder. */
  recordDir?: string;
  /** Where hook functions may live: the Loops' rules (loopback allowed in dev mode or by flag). */
  urlPolicy: FunctionUrlPolicy;
  /** Sensitive resources hooks may intercept nonetheless (none by default). */
  hookAllowedResources: SensitiveCategory[];
  /** How often each hook's ServiceAccount rights are reviewed again. */
  accessReviewSeconds: number;
  /** Context objects holding more JSON values are never cached (sent as null). */
  maxObjectValues: number;
  /** Networks (CIDR or address) no admission function call may connect to, besides the fixed refusals. */
  deniedNetworks: string[];
  /** Dev mode: loopback ports no admission function call may connect to (the local control plane's). */
  deniedLoopbackPorts: number[];
  /** Admission calls in flight per tenant (an AdmissionHook's namespace; cluster hooks are one); over it the failurePolicy applies. */
  tenantMaxInFlight: number;
  /** The context objects one request of one hook may carry, serialised; past it the hook's failurePolicy applies. */
  maxContextBytes: number;
  /** Request bytes (reviews and the requests built from them) in flight in the gateway, divided by tenant. */
  maxInFlightRequestBytes: number;
  /** Buckets of namespaces whose hooks get their own pair of webhook configurations. */
  tenantConfigurations: number;
  /** The bytes one webhook configuration object may take; over it, the largest tenant's hooks are left out. */
  maxConfigurationBytes: number;
  /** The bytes one hook's rules, selectors and matchConditions may take (InvalidSpec over it). */
  maxHookEntryBytes: number;
  /** Namespaced hooks' timeout cap, excluded identities, hooks per tenant, circuit breaker. */
  tenantHooks: TenantHookSettings;
  /** Each hook's last admissions, and the API that serves them. */
  admissionHistory: AdmissionHistorySettings;
  /** Outside the cluster only (kubeloop dev, tests): where cluster Service hosts connect (lib/function-client/service-address.ts). */
  connectServicesTo?: string;
}

export const WEBHOOK_USAGE = `usage: kubeloop webhook [options]

  --port 8443                      HTTPS admission port (PORT)
  --ops-port ${DEFAULT_WEBHOOK_OPS_PORT}                  HTTP /healthz /readyz /metrics (KUBELOOP_WEBHOOK_OPS_PORT)
  --client-ca-file PATH            accept reviews only from a client certificate this CA signed: the API server's (KUBELOOP_WEBHOOK_CLIENT_CA_FILE)
  --client-name NAME               ...with this common name (repeatable; KUBELOOP_WEBHOOK_CLIENT_NAMES, comma-separated)
  --host 0.0.0.0                   (HOST)
  --kubeconfig PATH                (KUBECONFIG; in-cluster service account when unset)
  --namespace kubeloop-system      kubeloop's namespace, holds the certificate Secret (KUBELOOP_NAMESPACE, POD_NAMESPACE)
  --service kubeloop-webhook       Service in front of the webhook, for the certificate SANs (KUBELOOP_WEBHOOK_SERVICE)
  --secret kubeloop-webhook-tls    certificate Secret (KUBELOOP_WEBHOOK_SECRET)
  --configuration NAME             a MutatingWebhookConfiguration of your own to keep the caBundle of (KUBELOOP_WEBHOOK_CONFIGURATION)
  --certificates self-managed|files  (KUBELOOP_WEBHOOK_CERTIFICATES) files = cert-manager mounted
  --tls-cert-file PATH --tls-key-file PATH   with --certificates files
  --cert-check-interval-seconds 3600 (KUBELOOP_CERT_CHECK_INTERVAL_SECONDS)
  --dev                            register the hooks with url https://127.0.0.1:<port> (kubeloop dev, tests); unregistered on SIGTERM/SIGINT
  --advertise-url https://HOST:PORT  register the hooks at this URL base instead of --service (KUBELOOP_WEBHOOK_ADVERTISE_URL)
  --only-namespace NS              send only objects of these namespaces (repeatable)
  --exclude-namespace NS           never send objects of these namespaces, besides kube-system and --namespace (repeatable)
  --watch-namespace NS             cache context objects of one namespace only
  --hook-configuration ${DEFAULT_HOOK_CONFIGURATION_NAME}  Mutating/ValidatingWebhookConfiguration of the AdmissionHooks (KUBELOOP_HOOK_CONFIGURATION)
  --hook-selector SELECTOR         serve only AdmissionHooks with these labels (KUBELOOP_HOOK_SELECTOR)
  --record DIR                     write every admission function call as a fixture (kubeloop replay)
  --hook-allow-resources a,b       sensitive resources hooks may intercept: ${SENSITIVE_CATEGORIES.join(', ')} (KUBELOOP_HOOK_ALLOW_RESOURCES)
  --access-review-seconds 300       how often each hook's ServiceAccount rights are reviewed again (KUBELOOP_ACCESS_REVIEW_SECONDS)
  --tenant-max-in-flight ${DEFAULT_TENANT_MAX_IN_FLIGHT}         admission calls in flight per tenant (namespace; all cluster hooks are one); more get the hook's failurePolicy (KUBELOOP_WEBHOOK_TENANT_MAX_IN_FLIGHT)
${TENANT_HOOK_USAGE}
${ADMISSION_HISTORY_USAGE}
  --max-object-values 100000        context objects holding more JSON values are never cached, sent as null (KUBELOOP_MAX_OBJECT_VALUES)
  --max-context-bytes ${DEFAULT_MAX_CONTEXT_BYTES}       context bytes one request of one hook may carry; more get the hook's failurePolicy (KUBELOOP_WEBHOOK_MAX_CONTEXT_BYTES)
  --max-in-flight-request-bytes ${DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES}  request bytes in flight, divided by tenant; over its share a tenant's hook gets its failurePolicy (KUBELOOP_WEBHOOK_MAX_IN_FLIGHT_REQUEST_BYTES)
  --tenant-configurations ${DEFAULT_TENANT_CONFIGURATIONS}        namespaced hooks' webhook configurations: namespaces hashed into this many pairs (KUBELOOP_WEBHOOK_TENANT_CONFIGURATIONS)
  --max-configuration-bytes ${DEFAULT_MAX_CONFIGURATION_BYTES}  bytes one tenant webhook configuration may take; the largest tenant's hooks are left out past it (KUBELOOP_WEBHOOK_MAX_CONFIGURATION_BYTES)
  --max-hook-entry-bytes ${DEFAULT_MAX_HOOK_ENTRY_BYTES}      bytes of one hook's rules, selectors and matchConditions (KUBELOOP_WEBHOOK_MAX_HOOK_ENTRY_BYTES)
${FUNCTION_URL_USAGE} (implied by --dev)
  --deny-function-network CIDR     never connect to a function there (repeatable; KUBELOOP_DENY_FUNCTION_NETWORKS, comma-separated)
  --deny-loopback-port PORT        with --dev: never call a function on this loopback port (repeatable; kubeloop dev: the control plane's)
  --connect-services-to 127.0.0.1  outside the cluster only (dev, tests): call a hook's function.service at this IP, same port;
                                   name.namespace=IP for one Service (comma-separated; KUBELOOP_CONNECT_SERVICES_TO)
  --body-limit-bytes 8388608 --log-level info --drain-delay-seconds 0

${TRACING_USAGE}`;

/** An https URL base without a trailing slash (hooks are served at <base>/admit/<hook>). */
function advertiseUrl(picked: Setting): string {
  let url: URL;
  try {
    url = new URL(picked.value);
  } catch {
    throw new Error(`${picked.setting}: "${picked.value}" is not a URL`);
  }
  if (url.protocol !== 'https:' || url.search || url.hash) throw new Error(`${picked.setting}: "${picked.value}" must be an https URL without query or fragment (the API server calls webhooks over TLS)`);
  return url.href.replace(/\/$/, '');
}

export function readWebhookConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...SERVER_FLAG_OPTIONS,
      'ops-port': { type: 'string' },
      'client-ca-file': { type: 'string' },
      'client-name': { type: 'string', multiple: true },
      kubeconfig: { type: 'string' },
      namespace: { type: 'string' },
      service: { type: 'string' },
      secret: { type: 'string' },
      configuration: { type: 'string' },
      certificates: { type: 'string' },
      'tls-cert-file': { type: 'string' },
      'tls-key-file': { type: 'string' },
      'cert-check-interval-seconds': { type: 'string' },
      dev: { type: 'boolean' },
      'advertise-url': { type: 'string' },
      'only-namespace': { type: 'string', multiple: true },
      'exclude-namespace': { type: 'string', multiple: true },
      'watch-namespace': { type: 'string' },
      'hook-configuration': { type: 'string' },
      'hook-selector': { type: 'string' },
      record: { type: 'string' },
      'hook-allow-resources': { type: 'string' },
      'access-review-seconds': { type: 'string' },
      'max-object-values': { type: 'string' },
      'tenant-max-in-flight': { type: 'string' },
      'max-context-bytes': { type: 'string' },
      'max-in-flight-request-bytes': { type: 'string' },
      'tenant-configurations': { type: 'string' },
      'max-configuration-bytes': { type: 'string' },
      'max-hook-entry-bytes': { type: 'string' },
      ...FUNCTION_URL_FLAG_OPTIONS,
      ...TENANT_HOOK_FLAG_OPTIONS,
      ...ADMISSION_HISTORY_FLAG_OPTIONS,
      'deny-function-network': { type: 'string', multiple: true },
      'deny-loopback-port': { type: 'string', multiple: true },
      'connect-services-to': { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new Error(`unexpected arguments: ${positionals.join(' ')}\n${WEBHOOK_USAGE}`);
  type Flag = Exclude<keyof typeof values, 'dev' | 'only-namespace' | 'exclude-namespace' | 'client-name' | 'allow-loopback-functions' | 'deny-function-network' | 'deny-loopback-port'>;
  const pick = (flag: Flag, ...variables: string[]) => pickSetting(values, env, flag, ...variables);
  const text = (flag: Flag, fallback: string, ...variables: string[]): string => pick(flag, ...variables)?.value ?? fallback;
  const config: WebhookConfig = {
    ...readServerSettings(values, env, { defaultPort: DEFAULT_WEBHOOK_PORT, minBodyLimitBytes: 1024 * 1024, maxDrainDelaySeconds: 600, defaultBodyLimitBytes: WEBHOOK_BODY_LIMIT_BYTES }),
    opsPort: settingInteger(pick('ops-port', 'KUBELOOP_WEBHOOK_OPS_PORT'), DEFAULT_WEBHOOK_OPS_PORT, 0, 65535),
    clientNames: values['client-name'] ?? (env.KUBELOOP_WEBHOOK_CLIENT_NAMES ?? '').split(',').map((n) => n.trim()).filter(Boolean),
    namespace: text('namespace', 'kubeloop-system', 'KUBELOOP_NAMESPACE', 'POD_NAMESPACE'),
    service: text('service', 'kubeloop-webhook', 'KUBELOOP_WEBHOOK_SERVICE'),
    secretName: text('secret', 'kubeloop-webhook-tls', 'KUBELOOP_WEBHOOK_SECRET'),
    certificates: settingOneOf(pick('certificates', 'KUBELOOP_WEBHOOK_CERTIFICATES'), 'self-managed', ['self-managed', 'files']),
    // At least a minute: a tighter loop would only hammer the API server.
    certCheckIntervalSeconds: settingInteger(pick('cert-check-interval-seconds', 'KUBELOOP_CERT_CHECK_INTERVAL_SECONDS'), 3600, 60, 7 * 24 * 3600),
    dev: values.dev ?? false,
    onlyNamespaces: values['only-namespace'] ?? [],
    excludedNamespaces: values['exclude-namespace'] ?? [],
    hookConfigurationName: text('hook-configuration', DEFAULT_HOOK_CONFIGURATION_NAME, 'KUBELOOP_HOOK_CONFIGURATION'),
    urlPolicy: readFunctionUrlPolicy(values, env),
    hookAllowedResources: [],
    accessReviewSeconds: settingInteger(pick('access-review-seconds', 'KUBELOOP_ACCESS_REVIEW_SECONDS'), 300, 10, 86_400),
    maxObjectValues: settingInteger(pick('max-object-values', 'KUBELOOP_MAX_OBJECT_VALUES'), DEFAULT_MAX_OBJECT_VALUES, 1000, 100_000_000),
    deniedNetworks: readDeniedNetworks(values['deny-function-network'], env),
    deniedLoopbackPorts: readDeniedLoopbackPorts(values['deny-loopback-port']),
    tenantMaxInFlight: settingInteger(pick('tenant-max-in-flight', 'KUBELOOP_WEBHOOK_TENANT_MAX_IN_FLIGHT'), DEFAULT_TENANT_MAX_IN_FLIGHT, 1, 100_000),
    maxContextBytes: settingInteger(pick('max-context-bytes', 'KUBELOOP_WEBHOOK_MAX_CONTEXT_BYTES'), DEFAULT_MAX_CONTEXT_BYTES, 1024, 64 * 1024 * 1024),
    maxInFlightRequestBytes: settingInteger(pick('max-in-flight-request-bytes', 'KUBELOOP_WEBHOOK_MAX_IN_FLIGHT_REQUEST_BYTES'), DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES, 1024 * 1024, 4 * 1024 * 1024 * 1024),
    tenantConfigurations: settingInteger(pick('tenant-configurations', 'KUBELOOP_WEBHOOK_TENANT_CONFIGURATIONS'), DEFAULT_TENANT_CONFIGURATIONS, 1, 256),
    // Under etcd's 1.5 MiB request limit, with room for what the API server adds (managedFields, caBundle).
    maxConfigurationBytes: settingInteger(pick('max-configuration-bytes', 'KUBELOOP_WEBHOOK_MAX_CONFIGURATION_BYTES'), DEFAULT_MAX_CONFIGURATION_BYTES, 16 * 1024, 1024 * 1024),
    maxHookEntryBytes: settingInteger(pick('max-hook-entry-bytes', 'KUBELOOP_WEBHOOK_MAX_HOOK_ENTRY_BYTES'), DEFAULT_MAX_HOOK_ENTRY_BYTES, 1024, 512 * 1024),
    tenantHooks: readTenantHookSettings(values, env),
    admissionHistory: readAdmissionHistorySettings(values, env),
  };
  checkConfigurationName(config.hookConfigurationName, config.tenantConfigurations);
  // Dev mode's functions listen on 127.0.0.1, as the gateway itself does.
  if (config.dev) config.urlPolicy = { ...config.urlPolicy, allowLoopback: true };
  const allowResources = pick('hook-allow-resources', 'KUBELOOP_HOOK_ALLOW_RESOURCES');
  if (allowResources) config.hookAllowedResources = parseSensitiveCategories(allowResources.value, allowResources.setting);
  const hookSelector = pick('hook-selector', 'KUBELOOP_HOOK_SELECTOR');
  if (hookSelector) config.hookSelector = hookSelector.value;
  const advertise = pick('advertise-url', 'KUBELOOP_WEBHOOK_ADVERTISE_URL');
  if (advertise) config.advertiseUrl = advertiseUrl(advertise);
  const configuration = pick('configuration', 'KUBELOOP_WEBHOOK_CONFIGURATION');
  if (configuration) config.configurationName = configuration.value;
  const clientCa = pick('client-ca-file', 'KUBELOOP_WEBHOOK_CLIENT_CA_FILE');
  if (clientCa) config.clientCaFile = clientCa.value;
  else if (config.clientNames.length > 0) throw new Error('--client-name needs --client-ca-file (the CA that signs the API server\'s webhook client certificate)');
  const connect = pick('connect-services-to', 'KUBELOOP_CONNECT_SERVICES_TO');
  if (connect) {
    parseServiceAddresses(connect.value, connect.setting);
    config.connectServicesTo = connect.value;
  }
  const record = pick('record');
  if (record) config.recordDir = record.value;
  const kubeconfig = pick('kubeconfig');
  if (kubeconfig) config.kubeconfig = kubeconfig.value;
  const watchNamespace = pick('watch-namespace');
  if (watchNamespace) config.watchNamespace = watchNamespace.value;
  if (config.certificates === 'files') {
    const cert = pick('tls-cert-file', 'KUBELOOP_TLS_CERT_FILE');
    const key = pick('tls-key-file', 'KUBELOOP_TLS_KEY_FILE');
    if (!cert || !key) throw new Error('--certificates files needs --tls-cert-file and --tls-key-file');
    if (config.dev) throw new Error('--dev makes its own certificates; it cannot be combined with --certificates files');
    config.tlsCertFile = cert.value;
    config.tlsKeyFile = key.value;
  }
  return config;
}
