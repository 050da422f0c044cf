// The webhook's start-up config: defaults, flags over variables, bad settings named.
import { describe, expect, it } from 'vitest';
import { readWebhookConfig } from './config.ts';

describe('readWebhookConfig', () => {
  it('defaults to port 8443, self-managed certificates, the hooks registered at the Service', () => {
    const config = readWebhookConfig([], {});
    expect(config).toMatchObject({ port: 8443, namespace: 'kubeloop-system', certificates: 'self-managed', bodyLimitBytes: 2 * 1024 * 1024, certCheckIntervalSeconds: 3600 });
    expect(config.advertiseUrl).toBeUndefined();
  });

  it('takes an https advertise URL (a gateway behind a balancer outside the cluster) and refuses anything else', () => {
    expect(readWebhookConfig(['--advertise-url', 'https://10.0.0.5:8443/'], {}).advertiseUrl).toBe('https://10.0.0.5:8443');
    expect(() => readWebhookConfig([], { KUBELOOP_WEBHOOK_ADVERTISE_URL: 'http://10.0.0.5' })).toThrow('KUBELOOP_WEBHOOK_ADVERTISE_URL: "http://10.0.0.5" must be an https URL');
    expect(() => readWebhookConfig(['--advertise-url', 'nope'], {})).toThrow('--advertise-url: "nope" is not a URL');
  });

  it('lets flags win over environment variables and names the bad setting', () => {
    expect(readWebhookConfig(['--port', '9443'], { PORT: '1' }).port).toBe(9443);
    expect(readWebhookConfig([], { POD_NAMESPACE: 'ops' }).namespace).toBe('ops');
    expect(() => readWebhookConfig([], { KUBELOOP_WEBHOOK_CERTIFICATES: 'maybe' })).toThrow('KUBELOOP_WEBHOOK_CERTIFICATES: "maybe" is not one of self-managed, files');
    expect(() => readWebhookConfig(['--body-limit-bytes', '1000'], {})).toThrow(/--body-limit-bytes/);
    expect(() => readWebhookConfig(['--certificates', 'files'], {})).toThrow(/--tls-cert-file/);
  });

  it('reads the ops port and the API server\'s client certificate settings, and refuses names without a CA', () => {
    expect(readWebhookConfig([], {})).toMatchObject({ opsPort: 8082, clientNames: [] });
    expect(readWebhookConfig([], {}).clientCaFile).toBeUndefined();
    const env = { KUBELOOP_WEBHOOK_OPS_PORT: '9090', KUBELOOP_WEBHOOK_CLIENT_CA_FILE: '/ca.crt', KUBELOOP_WEBHOOK_CLIENT_NAMES: 'a, b' };
    expect(readWebhookConfig([], env)).toMatchObject({ opsPort: 9090, clientCaFile: '/ca.crt', clientNames: ['a', 'b'] });
    expect(readWebhookConfig(['--client-name', 'c', '--client-name', 'd'], env).clientNames).toEqual(['c', 'd']);
    expect(() => readWebhookConfig(['--client-name', 'c'], {})).toThrow('--client-name needs --client-ca-file');
    expect(() => readWebhookConfig(['--ops-port', 'x'], {})).toThrow(/--ops-port/);
  });
});
