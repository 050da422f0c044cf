// The gateway's admission history (admission-history.ts) and its API (admission-history-api.ts): flags,
// variables and defaults in one place; config.ts spreads them in, run-webhook.ts starts what they ask for.
import { hostname } from 'node:os';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { pickSetting, settingInteger, SettingError, type FlagValues } from '../lib/config/settings.ts';
import { KubeClient } from '../lib/kube/kube-client.ts';
import type { ClusterCredentials } from '../lib/kube/kube-config.ts';
import { AdmissionHistory, DEFAULT_ADMISSION_HISTORY_LIMITS, type AdmissionHistoryLimits } from './gateway/admission-history.ts';
import { startAdmissionHistoryApi } from './history/admission-history-api.ts';

export interface AdmissionHistorySettings extends AdmissionHistoryLimits {
  /** The admission history API (APIService v1alpha1.admissions.kubeloop.dev): its HTTPS port and serving certificate; off when undefined. */
  api?: { port: number; certFile: string; keyFile: string };
}

export const ADMISSION_HISTORY_FLAG_OPTIONS = {
  'admission-history-per-hook': { type: 'string' },
  'admission-history-hooks': { type: 'string' },
  'admission-history-api-port': { type: 'string' },
  'admission-history-tls-cert-file': { type: 'string' },
  'admission-history-tls-key-file': { type: 'string' },
} as const;

export const ADMISSION_HISTORY_USAGE = `  --admission-history-per-hook ${DEFAULT_ADMISSION_HISTORY_LIMITS.perHook}   admissions kept per hook, 0: off (KUBELOOP_ADMISSION_HISTORY_PER_HOOK)
  --admission-history-hooks ${DEFAULT_ADMISSION_HISTORY_LIMITS.hooks}     hooks kept, the least recently admitting dropped first (KUBELOOP_ADMISSION_HISTORY_HOOKS)
  --admission-history-api-port PORT  serve the admission history API (APIService v1alpha1.admissions.kubeloop.dev) here over HTTPS
                                   (KUBELOOP_ADMISSION_HISTORY_API_PORT)
  --admission-history-tls-cert-file PATH --admission-history-tls-key-file PATH   its serving certificate, trusted by the APIService
                                   (KUBELOOP_ADMISSION_HISTORY_TLS_CERT_FILE, KUBELOOP_ADMISSION_HISTORY_TLS_KEY_FILE)`;

export function readAdmissionHistorySettings(values: FlagValues, env: NodeJS.ProcessEnv): AdmissionHistorySettings {
  const pick = (flag: keyof typeof ADMISSION_HISTORY_FLAG_OPTIONS, variable: string) => pickSetting(values, env, flag, variable);
  const port = pick('admission-history-api-port', 'KUBELOOP_ADMISSION_HISTORY_API_PORT');
  const certFile = pick('admission-history-tls-cert-file', 'KUBELOOP_ADMISSION_HISTORY_TLS_CERT_FILE')?.value;
  const keyFile = pick('admission-history-tls-key-file', 'KUBELOOP_ADMISSION_HISTORY_TLS_KEY_FILE')?.value;
  if (port && (!certFile || !keyFile)) throw new SettingError(`${port.setting} needs --admission-history-tls-cert-file and --admission-history-tls-key-file (the certificate the APIService trusts)`);
  return {
    perHook: settingInteger(pick('admission-history-per-hook', 'KUBELOOP_ADMISSION_HISTORY_PER_HOOK'), DEFAULT_ADMISSION_HISTORY_LIMITS.perHook, 0, 10_000),
    hooks: settingInteger(pick('admission-history-hooks', 'KUBELOOP_ADMISSION_HISTORY_HOOKS'), DEFAULT_ADMISSION_HISTORY_LIMITS.hooks, 1, 100_000),
    ...(port && certFile && keyFile ? { api: { port: settingInteger(port, 0, 0, 65535), certFile, keyFile } } : {}),
  };
}

/** The recorder the gateway fills (none when perHook is 0). */
export const admissionHistoryOf = (settings: AdmissionHistorySettings) => (settings.perHook > 0 ? new AdmissionHistory(settings) : undefined);

/** The API on its own port and client (its SubjectAccessReviews never wait behind the gateway's); undefined when not asked for. */
export async function startGatewayAdmissionHistoryApi(settings: AdmissionHistorySettings, history: AdmissionHistory | undefined, kubeConfig: ClusterCredentials, logger: Logger, host?: string) {
  if (!settings.api || !history) return undefined;
  const [certPem, keyPem] = await Promise.all([readFile(settings.api.certFile, 'utf8'), readFile(settings.api.keyFile, 'utf8')]);
  const client = await KubeClient.fromKubeConfig(kubeConfig, { rateLimit: { qps: 20, burst: 40 } });
  try {
    const api = await startAdmissionHistoryApi({ history, identity: process.env.POD_NAME ?? hostname(), client, logger: logger.child({ component: 'admission-history-api' }), port: settings.api.port, ...(host ? { host } : {}), tls: { certPem, keyPem } });
    return { url: api.url, close: async () => (await api.close(), await client.close()) };
  } catch (error) {
    await client.close();
    throw error;
  }
}
