// The MutatingWebhookConfiguration shape (shared with the Helm chart) and the webhook's start-up config.
import { describe, expect, it } from 'vitest';
import { readWebhookConfig } from './config.ts';
import { buildWebhookConfiguration } from './lifecycle/configuration.ts';

describe('buildWebhookConfiguration', () => {
  it('sends only annotated pod CREATEs outside kube-system and kubeloop, with no side effects, 5 s, IfNeeded, Ignore', () => {
    const config = buildWebhookConfiguration({
      name: 'own-webhook',
      target: { service: { name: 'kubeloop-webhook', namespace: 'kubeloop' } },
      caBundlePem: 'PEM',
      kubeloopNamespace: 'kubeloop',
    });
    const [webhook] = config.webhooks ?? [];
    expect(webhook).toMatchObject({
      name: 'watcher-sidecar.watch.kubeloop.dev',
      admissionReviewVersions: ['v1'],
      clientConfig: { service: { name: 'kubeloop-webhook', namespace: 'kubeloop', path: '/mutate/watcher-sidecar', port: 443 }, caBundle: 'UEVN' },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
      namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kubeloop'] }] },
      matchConditions: [{ name: 'opted-in', expression: "has(object.metadata.annotations) && 'watch.kubeloop.dev/watcher' in object.metadata.annotations" }],
      sideEffects: 'None',
      timeoutSeconds: 5,
      failurePolicy: 'Ignore',
      reinvocationPolicy: 'IfNeeded',
    });
  });

  it('points at a URL in dev mode and can be limited to test namespaces', () => {
    const config = buildWebhookConfiguration({
      name: 'own-webhook',
      target: { url: 'https://127.0.0.1:8443/mutate/watcher-sidecar' },
      kubeloopNamespace: 'kubeloop',
      failurePolicy: 'Fail',
      onlyNamespaces: ['e2e-1'],
    });
    expect(config.webhooks?.[0]?.clientConfig).toEqual({ url: 'https://127.0.0.1:8443/mutate/watcher-sidecar' });
    expect(config.webhooks?.[0]?.failurePolicy).toBe('Fail');
    expect(config.webhooks?.[0]?.namespaceSelector?.matchExpressions?.[1]).toEqual({ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['e2e-1'] });
  });

  it('rejects a timeout above 5 seconds', () => {
    expect(() => buildWebhookConfiguration({ name: 'own-webhook', target: { url: 'https://x' }, kubeloopNamespace: 'k', timeoutSeconds: 10 })).toThrow(/timeoutSeconds/);
  });
});

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
