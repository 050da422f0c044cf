// Configuration of `kubeloop webhook`: flags win over environment variables; every value is checked
// at start-up and a bad one is reported with the flag or variable that set it.
import { parseArgs } from 'node:util';
import { pickSetting, settingInteger, settingOneOf } from '../lib/config/settings.ts';
import { readServerSettings, SERVER_FLAG_OPTIONS, type ServerSettings } from '../lib/server/server-settings.ts';
import type { MissingWatcherPolicy } from './admit-pod.ts';
import { DEFAULT_CONFIGURATION_NAME, DEFAULT_WEBHOOK_PORT, type FailurePolicy } from './configuration.ts';
import { DEFAULT_HOOK_CONFIGURATION_NAME } from './hook-configuration.ts';

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

export interface WebhookConfig extends ServerSettings {
  kubeconfig?: string;
  /** kubeloop's namespace: holds the certificate Secret and is never sent to the webhook. */
  namespace: string;
  service: string;
  secretName: string;
  configurationName: string;
  certificates: CertificateMode;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  certCheckIntervalSeconds: number;
  missingWatcher: MissingWatcherPolicy;
  /**
   * Dev mode: register the MutatingWebhookConfiguration ourselves with url https://127.0.0.1:<port>/...
   * (how a local API server reaches a webhook running outside the cluster).
   */
  dev: boolean;
  failurePolicy: FailurePolicy;
  /** Dev mode and tests: only pods in these namespaces are sent to this webhook. */
  onlyNamespaces: string[];
  /** Cache Watchers of one namespace only (tests); all namespaces by default. */
  watchNamespace?: string;
  /** The Mutating- and ValidatingWebhookConfiguration the AdmissionHook gateway owns. */
  hookConfigurationName: string;
  /** Serve only AdmissionHooks matching this label selector (several gateways, tests). */
  hookSelector?: string;
  /** Write every admission function call as a fixture into this folder. */
  recordDir?: string;
}

export const WEBHOOK_USAGE = `usage: kubeloop webhook [options]

  --port 8443                      HTTPS port (PORT)
  --host 0.0.0.0                   (HOST)
  --kubeconfig PATH                (KUBECONFIG; in-cluster service account when unset)
  --namespace kubeloop-system      kubeloop's namespace, holds the certificate Secret (KUBELOOP_NAMESPACE, POD_NAMESPACE)
  --service kubeloop-webhook       Service in front of the webhook, for the certificate SANs (KUBELOOP_WEBHOOK_SERVICE)
  --secret kubeloop-webhook-tls    certificate Secret (KUBELOOP_WEBHOOK_SECRET)
  --configuration ${DEFAULT_CONFIGURATION_NAME}  MutatingWebhookConfiguration to keep the caBundle of (KUBELOOP_WEBHOOK_CONFIGURATION)
  --certificates self-managed|files  (KUBELOOP_WEBHOOK_CERTIFICATES) files = cert-manager mounted
  --tls-cert-file PATH --tls-key-file PATH   with --certificates files
  --cert-check-interval-seconds 3600 (KUBELOOP_CERT_CHECK_INTERVAL_SECONDS)
  --missing-watcher allow|deny     pod naming a Watcher that does not exist (KUBELOOP_MISSING_WATCHER)
  --dev                            register the configuration with url https://127.0.0.1:<port> (kubeloop dev, tests)
  --failure-policy Ignore|Fail     of the registered configuration in --dev (KUBELOOP_WEBHOOK_FAILURE_POLICY)
  --only-namespace NS              in --dev, send only pods of these namespaces (repeatable)
  --watch-namespace NS             cache Watchers (and context objects) of one namespace only
  --hook-configuration ${DEFAULT_HOOK_CONFIGURATION_NAME}  Mutating/ValidatingWebhookConfiguration of the AdmissionHooks (KUBELOOP_HOOK_CONFIGURATION)
  --hook-selector SELECTOR         serve only AdmissionHooks with these labels (KUBELOOP_HOOK_SELECTOR)
  --record DIR                     write every admission function call as a fixture (kubeloop replay)
  --body-limit-bytes 8388608 --log-level info --drain-delay-seconds 0`;

export function readWebhookConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...SERVER_FLAG_OPTIONS,
      kubeconfig: { type: 'string' },
      namespace: { type: 'string' },
      service: { type: 'string' },
      secret: { type: 'string' },
      configuration: { type: 'string' },
      certificates: { type: 'string' },
      'tls-cert-file': { type: 'string' },
      'tls-key-file': { type: 'string' },
      'cert-check-interval-seconds': { type: 'string' },
      'missing-watcher': { type: 'string' },
      dev: { type: 'boolean' },
      'failure-policy': { type: 'string' },
      'only-namespace': { type: 'string', multiple: true },
      'watch-namespace': { type: 'string' },
      'hook-configuration': { type: 'string' },
      'hook-selector': { type: 'string' },
      record: { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new Error(`unexpected arguments: ${positionals.join(' ')}\n${WEBHOOK_USAGE}`);
  type Flag = Exclude<keyof typeof values, 'dev' | 'only-namespace'>;
  const pick = (flag: Flag, ...variables: string[]) => pickSetting(values, env, flag, ...variables);
  const text = (flag: Flag, fallback: string, ...variables: string[]): string => pick(flag, ...variables)?.value ?? fallback;
  const config: WebhookConfig = {
    ...readServerSettings(values, env, { defaultPort: DEFAULT_WEBHOOK_PORT, minBodyLimitBytes: 1024 * 1024, maxDrainDelaySeconds: 600, defaultBodyLimitBytes: WEBHOOK_BODY_LIMIT_BYTES }),
    namespace: text('namespace', 'kubeloop-system', 'KUBELOOP_NAMESPACE', 'POD_NAMESPACE'),
    service: text('service', 'kubeloop-webhook', 'KUBELOOP_WEBHOOK_SERVICE'),
    secretName: text('secret', 'kubeloop-webhook-tls', 'KUBELOOP_WEBHOOK_SECRET'),
    configurationName: text('configuration', DEFAULT_CONFIGURATION_NAME, 'KUBELOOP_WEBHOOK_CONFIGURATION'),
    certificates: settingOneOf(pick('certificates', 'KUBELOOP_WEBHOOK_CERTIFICATES'), 'self-managed', ['self-managed', 'files']),
    // At least a minute: a tighter loop would only hammer the API server.
    certCheckIntervalSeconds: settingInteger(pick('cert-check-interval-seconds', 'KUBELOOP_CERT_CHECK_INTERVAL_SECONDS'), 3600, 60, 7 * 24 * 3600),
    missingWatcher: settingOneOf(pick('missing-watcher', 'KUBELOOP_MISSING_WATCHER'), 'allow', ['allow', 'deny']),
    dev: values.dev ?? false,
    failurePolicy: settingOneOf(pick('failure-policy', 'KUBELOOP_WEBHOOK_FAILURE_POLICY'), 'Ignore', ['Ignore', 'Fail']),
    onlyNamespaces: values['only-namespace'] ?? [],
    hookConfigurationName: text('hook-configuration', DEFAULT_HOOK_CONFIGURATION_NAME, 'KUBELOOP_HOOK_CONFIGURATION'),
  };
  const hookSelector = pick('hook-selector', 'KUBELOOP_HOOK_SELECTOR');
  if (hookSelector) config.hookSelector = hookSelector.value;
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
