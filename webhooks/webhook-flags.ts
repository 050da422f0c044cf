// The flags of `kubeloop webhook` as one table: each flag's type, its one default, its range, its help and its
// environment variables. parseArgs' options and the --help text are made from it, and config.ts (with the
// tenant-hook and admission-history settings) reads every value through it (as the router's router-flags.ts).
import { FUNCTION_URL_FLAG_OPTIONS, FUNCTION_URL_USAGE } from '../lib/config/function-url-policy.ts';
import { pickSetting, settingInteger, settingOneOf, type FlagValues, type Setting } from '../lib/config/settings.ts';
import { DEFAULT_MAX_OBJECT_VALUES } from '../lib/contract/json-depth.ts';
import { LOG_LEVELS } from '../lib/observability/logger.ts';
import { SERVER_DEFAULTS, SERVER_FLAG_OPTIONS, TRACING_USAGE } from '../lib/server/server-settings.ts';
import { DEFAULT_EXCLUDED_IDENTITIES } from './base/excluded-identities.ts';
import { DEFAULT_MAX_HOOK_ENTRY_BYTES } from './base/hook-bounds.ts';
import { DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS } from './base/namespaced-hook-rules.ts';
import { SENSITIVE_CATEGORIES } from './base/sensitive-resources.ts';
import { DEFAULT_ADMISSION_HISTORY_LIMITS } from './gateway/admission-history.ts';
import { DEFAULT_BREAKER_COOL_DOWN_SECONDS, DEFAULT_BREAKER_THRESHOLD } from './gateway/circuit-breaker.ts';
import { DEFAULT_MAX_CONTEXT_BYTES } from './gateway/context-cache.ts';
import { DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES } from './gateway/request-byte-budget.ts';
import { DEFAULT_TENANT_MAX_IN_FLIGHT } from './gateway/tenant-limiter.ts';
import { DEFAULT_HOOK_ACCESS_REVIEW_MS, DEFAULT_UNWATCHED_HOOK_ACCESS_REVIEW_MS } from './lifecycle/hook-access.ts';
import { DEFAULT_HOOK_CONFIGURATION_NAME } from './lifecycle/hook-configuration.ts';
import { DEFAULT_MAX_CONFIGURATION_BYTES, DEFAULT_TENANT_CONFIGURATIONS } from './lifecycle/hook-configuration-shards.ts';
import { DEFAULT_TENANT_MAX_HOOKS } from './lifecycle/tenant-hook-limit.ts';

/** One flag: how it is parsed, its variables (the first set wins; a flag wins over all), and what --help says. */
export type WebhookFlag = {
  env?: readonly string[];
  help: string;
} & (
  /** Without a default: unset means off (a port to serve something on only when asked). */
  | { type: 'integer'; default?: number; min: number; max: number }
  | { type: 'text'; default?: string; value?: string }
  | { type: 'choice'; default: string; choices: readonly string[] }
  | { type: 'boolean' }
  /** Repeatable (`value` names one). */
  | { type: 'list'; value: string }
);

/** The admission port's default (the chart's Service targets it). */
export const DEFAULT_WEBHOOK_PORT = 8443;

/** Plain HTTP /healthz, /readyz, /metrics: probes and Prometheus cannot present the API server's certificate. */
export const DEFAULT_WEBHOOK_OPS_PORT = 8082;

/**
 * 2 MiB: an AdmissionReview of a pod CREATE holds one object, and the API server stores at most 1.5 MiB
 * per object; with the 10 s request timeout a few dozen slow senders stay far below a 256 Mi limit.
 */
export const WEBHOOK_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/** Every flag of the gateway but the shared function-URL and tracing ones (lib/), in --help's order. */
export const WEBHOOK_FLAGS = {
  port: { type: 'integer', default: DEFAULT_WEBHOOK_PORT, min: 0, max: 65535, env: ['PORT'], help: 'HTTPS admission port' },
  'ops-port': { type: 'integer', default: DEFAULT_WEBHOOK_OPS_PORT, min: 0, max: 65535, env: ['KUBELOOP_WEBHOOK_OPS_PORT'], help: 'HTTP /healthz /readyz /metrics; 0: any free port' },
  'client-ca-file': { type: 'text', value: 'PATH', env: ['KUBELOOP_WEBHOOK_CLIENT_CA_FILE'], help: "accept reviews only from a client certificate this CA signed: the API server's" },
  'client-name': { type: 'list', value: 'NAME', env: ['KUBELOOP_WEBHOOK_CLIENT_NAMES'], help: '...with this common name (repeatable; the variable comma-separated)' },
  host: { type: 'text', default: SERVER_DEFAULTS.host, env: ['HOST'], help: 'the address both ports listen on' },
  kubeconfig: { type: 'text', value: 'PATH', help: 'KUBECONFIG, else the in-cluster service account, when unset' },
  namespace: { type: 'text', default: 'kubeloop-system', env: ['KUBELOOP_NAMESPACE', 'POD_NAMESPACE'], help: "kubeloop's namespace, holds the certificate Secret" },
  service: { type: 'text', default: 'kubeloop-webhook', env: ['KUBELOOP_WEBHOOK_SERVICE'], help: 'Service in front of the webhook, for the certificate SANs' },
  secret: { type: 'text', default: 'kubeloop-webhook-tls', env: ['KUBELOOP_WEBHOOK_SECRET'], help: 'certificate Secret' },
  configuration: { type: 'text', value: 'NAME', env: ['KUBELOOP_WEBHOOK_CONFIGURATION'], help: 'a MutatingWebhookConfiguration of your own to keep the caBundle of' },
  certificates: { type: 'choice', default: 'self-managed', choices: ['self-managed', 'files'], env: ['KUBELOOP_WEBHOOK_CERTIFICATES'], help: 'files: a certificate cert-manager mounts (--tls-cert-file, --tls-key-file)' },
  'tls-cert-file': { type: 'text', value: 'PATH', env: ['KUBELOOP_TLS_CERT_FILE'], help: 'with --certificates files' },
  'tls-key-file': { type: 'text', value: 'PATH', env: ['KUBELOOP_TLS_KEY_FILE'], help: 'with --certificates files' },
  // At least a minute: a tighter loop would only hammer the API server.
  'cert-check-interval-seconds': { type: 'integer', default: 3600, min: 60, max: 7 * 24 * 3600, env: ['KUBELOOP_CERT_CHECK_INTERVAL_SECONDS'], help: 'how often the certificates are checked for renewal' },
  dev: { type: 'boolean', help: 'register the hooks with url https://127.0.0.1:<port> (kubeloop dev, tests); unregistered on SIGTERM/SIGINT' },
  'advertise-url': { type: 'text', value: 'https://HOST:PORT', env: ['KUBELOOP_WEBHOOK_ADVERTISE_URL'], help: 'register the hooks at this URL base instead of --service' },
  'only-namespace': { type: 'list', value: 'NS', help: 'send only objects of these namespaces (repeatable)' },
  'exclude-namespace': { type: 'list', value: 'NS', help: 'never send objects of these namespaces, besides kube-system and --namespace (repeatable)' },
  'watch-namespace': { type: 'text', value: 'NS', help: 'cache context objects of one namespace only' },
  'hook-configuration': { type: 'text', default: DEFAULT_HOOK_CONFIGURATION_NAME, env: ['KUBELOOP_HOOK_CONFIGURATION'], help: 'Mutating/ValidatingWebhookConfiguration of the AdmissionHooks' },
  'hook-selector': { type: 'text', value: 'SELECTOR', env: ['KUBELOOP_HOOK_SELECTOR'], help: 'serve only AdmissionHooks with these labels' },
  record: { type: 'text', value: 'DIR', help: 'write every admission function call as a fixture (kubeloop replay)' },
  'hook-allow-resources': { type: 'text', value: 'a,b', env: ['KUBELOOP_HOOK_ALLOW_RESOURCES'], help: `sensitive resources hooks may intercept: ${SENSITIVE_CATEGORIES.join(', ')}` },
  'access-review-seconds': { type: 'integer', min: 10, max: 86_400, env: ['KUBELOOP_ACCESS_REVIEW_SECONDS'], help: `how often every hook is reviewed and its configuration written again whatever changes are watched; default ${DEFAULT_HOOK_ACCESS_REVIEW_MS / 1000} while the gateway watches RBAC and its configurations (a change brings its own review within seconds), ${DEFAULT_UNWATCHED_HOOK_ACCESS_REVIEW_MS / 1000} when it may not` },
  'tenant-max-in-flight': { type: 'integer', default: DEFAULT_TENANT_MAX_IN_FLIGHT, min: 1, max: 100_000, env: ['KUBELOOP_WEBHOOK_TENANT_MAX_IN_FLIGHT'], help: "admission calls in flight per tenant (namespace; all cluster hooks are one); more get the hook's failurePolicy" },
  'namespaced-hook-max-timeout-seconds': { type: 'integer', default: DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS, min: 1, max: 30, env: ['KUBELOOP_NAMESPACED_HOOK_MAX_TIMEOUT_SECONDS'], help: 'the longest timeoutSeconds of a namespaced AdmissionHook' },
  'hook-exclude-identities': { type: 'text', default: DEFAULT_EXCLUDED_IDENTITIES.join(','), env: ['KUBELOOP_HOOK_EXCLUDE_IDENTITIES'], help: 'users ("name", "prefix*", "group:name") never sent to namespaced hooks, "" for none' },
  'tenant-max-hooks': { type: 'integer', default: DEFAULT_TENANT_MAX_HOOKS, min: 0, max: 100_000, env: ['KUBELOOP_TENANT_MAX_HOOKS'], help: 'AdmissionHooks served per namespace, oldest first; 0 for no limit' },
  'hook-breaker-failures': { type: 'integer', default: DEFAULT_BREAKER_THRESHOLD, min: 0, max: 1000, env: ['KUBELOOP_HOOK_BREAKER_FAILURES'], help: "consecutive failed calls that open a hook's circuit breaker; 0 for none" },
  'hook-breaker-cool-down-seconds': { type: 'integer', default: DEFAULT_BREAKER_COOL_DOWN_SECONDS, min: 1, max: 3600, env: ['KUBELOOP_HOOK_BREAKER_COOL_DOWN_SECONDS'], help: 'how long an open breaker answers by the failurePolicy before a probe call' },
  'admission-history-per-hook': { type: 'integer', default: DEFAULT_ADMISSION_HISTORY_LIMITS.perHook, min: 0, max: 10_000, env: ['KUBELOOP_ADMISSION_HISTORY_PER_HOOK'], help: 'admissions kept per hook, 0: off' },
  'admission-history-hooks': { type: 'integer', default: DEFAULT_ADMISSION_HISTORY_LIMITS.hooks, min: 1, max: 100_000, env: ['KUBELOOP_ADMISSION_HISTORY_HOOKS'], help: 'hooks kept, the least recently admitting dropped first' },
  'admission-history-api-port': { type: 'integer', min: 0, max: 65535, env: ['KUBELOOP_ADMISSION_HISTORY_API_PORT'], help: 'serve the admission history API (APIService v1alpha1.admissions.kubeloop.dev) here over HTTPS; unset: off, 0: any free port' },
  'admission-history-tls-cert-file': { type: 'text', value: 'PATH', env: ['KUBELOOP_ADMISSION_HISTORY_TLS_CERT_FILE'], help: 'its serving certificate, trusted by the APIService' },
  'admission-history-tls-key-file': { type: 'text', value: 'PATH', env: ['KUBELOOP_ADMISSION_HISTORY_TLS_KEY_FILE'], help: 'and its key' },
  'max-object-values': { type: 'integer', default: DEFAULT_MAX_OBJECT_VALUES, min: 1000, max: 100_000_000, env: ['KUBELOOP_MAX_OBJECT_VALUES'], help: 'context objects holding more JSON values are never cached, sent as null' },
  'max-context-bytes': { type: 'integer', default: DEFAULT_MAX_CONTEXT_BYTES, min: 1024, max: 64 * 1024 * 1024, env: ['KUBELOOP_WEBHOOK_MAX_CONTEXT_BYTES'], help: "context bytes one request of one hook may carry; more get the hook's failurePolicy" },
  'max-in-flight-request-bytes': { type: 'integer', default: DEFAULT_MAX_IN_FLIGHT_REQUEST_BYTES, min: 1024 * 1024, max: 4 * 1024 * 1024 * 1024, env: ['KUBELOOP_WEBHOOK_MAX_IN_FLIGHT_REQUEST_BYTES'], help: "request bytes in flight, divided by tenant; over its share a tenant's hook gets its failurePolicy" },
  'tenant-configurations': { type: 'integer', default: DEFAULT_TENANT_CONFIGURATIONS, min: 1, max: 256, env: ['KUBELOOP_WEBHOOK_TENANT_CONFIGURATIONS'], help: "namespaced hooks' webhook configurations: namespaces hashed into this many pairs" },
  // Under etcd's 1.5 MiB request limit, with room for what the API server adds (managedFields, caBundle).
  'max-configuration-bytes': { type: 'integer', default: DEFAULT_MAX_CONFIGURATION_BYTES, min: 16 * 1024, max: 1024 * 1024, env: ['KUBELOOP_WEBHOOK_MAX_CONFIGURATION_BYTES'], help: "bytes one tenant webhook configuration may take; the largest tenant's hooks are left out past it" },
  'max-hook-entry-bytes': { type: 'integer', default: DEFAULT_MAX_HOOK_ENTRY_BYTES, min: 1024, max: 512 * 1024, env: ['KUBELOOP_WEBHOOK_MAX_HOOK_ENTRY_BYTES'], help: "bytes of one hook's rules, selectors and matchConditions" },
  'deny-function-network': { type: 'list', value: 'CIDR', env: ['KUBELOOP_DENY_FUNCTION_NETWORKS'], help: 'never connect to a function there (repeatable; the variable comma-separated)' },
  'deny-loopback-port': { type: 'list', value: 'PORT', help: "with --dev: never call a function on this loopback port (repeatable; kubeloop dev: the control plane's)" },
  'connect-services-to': { type: 'text', value: '127.0.0.1', env: ['KUBELOOP_CONNECT_SERVICES_TO'], help: "outside the cluster only (dev, tests): call a hook's function.service at this IP, same port; name.namespace=IP for one Service (comma-separated)" },
  'body-limit-bytes': { type: 'integer', default: WEBHOOK_BODY_LIMIT_BYTES, min: 1024 * 1024, max: 1024 * 1024 * 1024, env: ['KUBELOOP_BODY_LIMIT_BYTES'], help: 'admission request body limit' },
  'log-level': { type: 'text', default: SERVER_DEFAULTS.logLevel, env: ['KUBELOOP_LOG_LEVEL'], help: LOG_LEVELS.join(', ') },
  'drain-delay-seconds': { type: 'integer', default: SERVER_DEFAULTS.drainDelaySeconds, min: 0, max: 600, env: ['KUBELOOP_DRAIN_DELAY_SECONDS'], help: 'on SIGTERM: fail /readyz, wait, then close' },
} as const satisfies Record<string, WebhookFlag>;

export type WebhookFlagName = keyof typeof WEBHOOK_FLAGS;
export type FlagsOfType<T extends WebhookFlag['type']> = { [K in WebhookFlagName]: (typeof WEBHOOK_FLAGS)[K]['type'] extends T ? K : never }[WebhookFlagName];

const entry = (name: WebhookFlagName): WebhookFlag => WEBHOOK_FLAGS[name];

/** parseArgs' option for a flag of the table. */
type OptionOf<F> = F extends { type: 'boolean' } ? { type: 'boolean' } : F extends { type: 'list' } ? { type: 'string'; multiple: true } : { type: 'string' };

const OWN_OPTIONS = Object.fromEntries(
  Object.entries(WEBHOOK_FLAGS).map(([name, flag]: [string, WebhookFlag]) => [name, flag.type === 'boolean' ? { type: 'boolean' } : flag.type === 'list' ? { type: 'string', multiple: true } : { type: 'string' }]),
) as { [K in WebhookFlagName]: OptionOf<(typeof WEBHOOK_FLAGS)[K]> };

/** parseArgs' options: the shared server and tracing flags, the table's (its defaults win), the function-URL flags. */
export const WEBHOOK_FLAG_OPTIONS = { ...SERVER_FLAG_OPTIONS, ...OWN_OPTIONS, ...FUNCTION_URL_FLAG_OPTIONS };

/** One --help line: `--flag <default or placeholder>`, the help, and the variables. */
function usageLine(name: string, flag: WebhookFlag): string {
  const shown = flag.type === 'boolean' ? '' : flag.type === 'choice' ? flag.choices.join('|') : flag.type === 'integer' ? String(flag.default ?? 'N') : flag.type === 'text' ? (flag.default ?? flag.value ?? '') : flag.value;
  const head = `  --${name}${shown ? ` ${shown}` : ''}`;
  const variables = flag.env?.length ? ` (${flag.env.join(', ')})` : '';
  const range = flag.type === 'integer' ? ` [${flag.min}..${flag.max}]` : flag.type === 'choice' ? ` (default ${flag.default})` : '';
  return `${head.padEnd(37)} ${flag.help}${range}${variables}`;
}

export const WEBHOOK_USAGE = `usage: kubeloop webhook [options]

${Object.entries(WEBHOOK_FLAGS)
  .map(([name, flag]: [string, WebhookFlag]) => usageLine(name, flag))
  .join('\n')}
${FUNCTION_URL_USAGE} (implied by --dev)

${TRACING_USAGE}`;

/** The flag's value, else the first of its variables set: the Setting names which, for errors. */
export function pickFlag(values: FlagValues, env: NodeJS.ProcessEnv, name: WebhookFlagName): Setting | undefined {
  return pickSetting(values, env, name, ...(entry(name).env ?? []));
}

type Flags = typeof WEBHOOK_FLAGS;
/** A flag's value type: always set when the table gives it a default, else undefined when unset. */
type ValueOf<K extends WebhookFlagName, T> = Flags[K] extends { default: unknown } ? T : T | undefined;

/** An integer flag, checked against its range; its one default (or undefined) when nothing set it. */
export function integerFlag<K extends FlagsOfType<'integer'>>(values: FlagValues, env: NodeJS.ProcessEnv, name: K): ValueOf<K, number> {
  const flag: { default?: number; min: number; max: number } = WEBHOOK_FLAGS[name];
  const picked = pickFlag(values, env, name);
  return (picked || flag.default !== undefined ? settingInteger(picked, flag.default ?? 0, flag.min, flag.max) : undefined) as ValueOf<K, number>;
}

/** A text flag: its value, else its one default (or undefined). */
export function textFlag<K extends FlagsOfType<'text'>>(values: FlagValues, env: NodeJS.ProcessEnv, name: K): ValueOf<K, string> {
  const flag = entry(name);
  return (pickFlag(values, env, name)?.value ?? (flag.type === 'text' ? flag.default : undefined)) as ValueOf<K, string>;
}

/** A choice flag: one of its choices, its default when unset. */
export function choiceFlag<K extends FlagsOfType<'choice'>>(values: FlagValues, env: NodeJS.ProcessEnv, name: K): Flags[K]['choices'][number] {
  const flag = WEBHOOK_FLAGS[name];
  return settingOneOf(pickFlag(values, env, name), flag.default, flag.choices);
}

/** A repeatable flag's values, else its variable's comma-separated entries, else none. */
export function listFlag(values: FlagValues, env: NodeJS.ProcessEnv, name: FlagsOfType<'list'>): string[] {
  const given = values[name];
  if (Array.isArray(given) && given.length > 0) return given.map(String);
  const variable = (entry(name).env ?? []).map((v) => env[v]).find((v) => v !== undefined && v !== '');
  return (variable ?? '').split(',').map((item) => item.trim()).filter(Boolean);
}
