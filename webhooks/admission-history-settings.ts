// The gateway's admission history (admission-history.ts) and its API (admission-history-api.ts): their settings,
// read from the flag table (webhook-flags.ts) for config.ts, and what run-webhook.ts starts from them.
import { hostname } from 'node:os';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { SettingError, type FlagValues } from '../lib/config/settings.ts';
import { KubeClient } from '../lib/kube/kube-client.ts';
import type { ClusterCredentials } from '../lib/kube/kube-config.ts';
import { AdmissionHistory, type AdmissionHistoryLimits } from './gateway/admission-history.ts';
import { integerFlag, pickFlag, textFlag } from './webhook-flags.ts';
import { startAdmissionHistoryApi } from './history/admission-history-api.ts';

export interface AdmissionHistorySettings extends AdmissionHistoryLimits {
  /** The admission history API (APIService v1alpha1.admissions.kubeloop.dev): its HTTPS port and serving certificate; off when undefined. */
  api?: { port: number; certFile: string; keyFile: string };
}

export function readAdmissionHistorySettings(values: FlagValues, env: NodeJS.ProcessEnv): AdmissionHistorySettings {
  const port = pickFlag(values, env, 'admission-history-api-port');
  const certFile = textFlag(values, env, 'admission-history-tls-cert-file');
  const keyFile = textFlag(values, env, 'admission-history-tls-key-file');
  if (port && (!certFile || !keyFile)) throw new SettingError(`${port.setting} needs --admission-history-tls-cert-file and --admission-history-tls-key-file (the certificate the APIService trusts)`);
  const apiPort = integerFlag(values, env, 'admission-history-api-port');
  return {
    perHook: integerFlag(values, env, 'admission-history-per-hook'),
    hooks: integerFlag(values, env, 'admission-history-hooks'),
    ...(apiPort !== undefined && certFile && keyFile ? { api: { port: apiPort, certFile, keyFile } } : {}),
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
