// The stand-alone Watcher-sidecar MutatingWebhookConfiguration cluster tests register: the same safety as the gateway's entries.
import { describe, expect, it } from 'vitest';
import { buildWebhookConfiguration } from './watcher-sidecar-webhook.ts';

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
