// Configuration of `kubeloop webhook`: flags win over environment variables; every value is checked
// at start-up and a bad one is reported with the flag or variable that set it.
import { parseArgs } from 'node:util';
import { readFunctionUrlPolicy, type FunctionUrlPolicy } from '../lib/config/function-url-policy.ts';
import type { Setting } from '../lib/config/settings.ts';
import { readServerSettings, type ServerSettings } from '../lib/server/server-settings.ts';
import { readDeniedLoopbackPorts, readDeniedNetworks } from '../lib/function-client/address-policy.ts';
import { parseServiceAddresses } from '../lib/function-client/service-address.ts';
import { parseSensitiveCategories, type SensitiveCategory } from './base/sensitive-resources.ts';
import { checkConfigurationName } from './lifecycle/hook-configuration-shards.ts';
import { readTenantHookSettings, type TenantHookSettings } from './tenant-hook-settings.ts';
import { readAdmissionHistorySettings, type AdmissionHistorySettings } from './admission-history-settings.ts';
import { choiceFlag, integerFlag, listFlag, pickFlag, textFlag, WEBHOOK_FLAG_OPTIONS, WEBHOOK_FLAGS, WEBHOOK_USAGE, type FlagsOfType } from './webhook-flags.ts';

export { WEBHOOK_USAGE };

/**
 * self-managed: CA and serving certificate in a Secret, rotated by the webhook, caBundle injected.
 * files: a certificate mounted from a Secret that cert-manager keeps (reloaded when it changes).
 */
export type CertificateMode = 'self-managed' | 'files';

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
  /** Unset: hourly while the gateway watches RBAC and its configurations, every 5 minutes else (hook-access.ts). */
  accessReviewSeconds: number | undefined;
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
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: WEBHOOK_FLAG_OPTIONS });
  if (positionals.length > 0) throw new Error(`unexpected arguments: ${positionals.join(' ')}\n${WEBHOOK_USAGE}`);
  const pick = (name: Parameters<typeof pickFlag>[2]) => pickFlag(values, env, name);
  const integer = <K extends FlagsOfType<'integer'>>(name: K) => integerFlag(values, env, name);
  const { port, 'body-limit-bytes': bodyLimit, 'drain-delay-seconds': drainDelay } = WEBHOOK_FLAGS;
  const config: WebhookConfig = {
    ...readServerSettings(values, env, { defaultPort: port.default, portVariables: port.env, minBodyLimitBytes: bodyLimit.min, maxDrainDelaySeconds: drainDelay.max, defaultBodyLimitBytes: bodyLimit.default }),
    opsPort: integer('ops-port'),
    clientNames: listFlag(values, env, 'client-name'),
    namespace: textFlag(values, env, 'namespace'),
    service: textFlag(values, env, 'service'),
    secretName: textFlag(values, env, 'secret'),
    certificates: choiceFlag(values, env, 'certificates'),
    certCheckIntervalSeconds: integer('cert-check-interval-seconds'),
    dev: values.dev ?? false,
    onlyNamespaces: listFlag(values, env, 'only-namespace'),
    excludedNamespaces: listFlag(values, env, 'exclude-namespace'),
    hookConfigurationName: textFlag(values, env, 'hook-configuration'),
    urlPolicy: readFunctionUrlPolicy(values, env),
    hookAllowedResources: [],
    accessReviewSeconds: integer('access-review-seconds'),
    maxObjectValues: integer('max-object-values'),
    deniedNetworks: readDeniedNetworks(values['deny-function-network'], env),
    deniedLoopbackPorts: readDeniedLoopbackPorts(values['deny-loopback-port']),
    tenantMaxInFlight: integer('tenant-max-in-flight'),
    maxContextBytes: integer('max-context-bytes'),
    maxInFlightRequestBytes: integer('max-in-flight-request-bytes'),
    tenantConfigurations: integer('tenant-configurations'),
    maxConfigurationBytes: integer('max-configuration-bytes'),
    maxHookEntryBytes: integer('max-hook-entry-bytes'),
    tenantHooks: readTenantHookSettings(values, env),
    admissionHistory: readAdmissionHistorySettings(values, env),
  };
  checkConfigurationName(config.hookConfigurationName, config.tenantConfigurations);
  // Dev mode's functions listen on 127.0.0.1, as the gateway itself does.
  if (config.dev) config.urlPolicy = { ...config.urlPolicy, allowLoopback: true };
  const allowResources = pick('hook-allow-resources');
  if (allowResources) config.hookAllowedResources = parseSensitiveCategories(allowResources.value, allowResources.setting);
  const advertise = pick('advertise-url');
  if (advertise) config.advertiseUrl = advertiseUrl(advertise);
  const clientCaFile = textFlag(values, env, 'client-ca-file');
  if (clientCaFile) config.clientCaFile = clientCaFile;
  else if (config.clientNames.length > 0) throw new Error('--client-name needs --client-ca-file (the CA that signs the API server\'s webhook client certificate)');
  const connect = pick('connect-services-to');
  if (connect) {
    parseServiceAddresses(connect.value, connect.setting);
    config.connectServicesTo = connect.value;
  }
  const optional = { hookSelector: 'hook-selector', configurationName: 'configuration', recordDir: 'record', kubeconfig: 'kubeconfig', watchNamespace: 'watch-namespace' } as const;
  for (const [field, name] of Object.entries(optional) as Array<[keyof typeof optional, (typeof optional)[keyof typeof optional]]>) {
    const value = textFlag(values, env, name);
    if (value) config[field] = value;
  }
  if (config.certificates === 'files') {
    const cert = textFlag(values, env, 'tls-cert-file');
    const key = textFlag(values, env, 'tls-key-file');
    if (!cert || !key) throw new Error('--certificates files needs --tls-cert-file and --tls-key-file');
    if (config.dev) throw new Error('--dev makes its own certificates; it cannot be combined with --certificates files');
    config.tlsCertFile = cert;
    config.tlsKeyFile = key;
  }
  return config;
}
