// A stand-alone Watcher-sidecar-shaped MutatingWebhookConfiguration of a given name, for cluster tests and
// fixture recording (the injector itself is an AdmissionHook since the gateway). Safety first, as the gateway's
// own entries: only annotated pods are sent, system namespaces never are, and failurePolicy is Ignore unless set.
import type { AdmissionregistrationV1WebhookClientConfig, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { WATCHER_ANNOTATION } from '../../api/watcher.ts';
import { namespaceSafetyExpressions } from '../../webhooks/lifecycle/namespace-safety.ts';

export const WEBHOOK_NAME = 'watcher-sidecar.watch.kubeloop.dev';
export const MUTATE_PATH = '/mutate/watcher-sidecar';
export type FailurePolicy = 'Ignore' | 'Fail';

export type WebhookTarget =
  | { url: string }
  | { service: { name: string; namespace: string; port?: number } };

export interface WebhookConfigurationOptions {
  /** No default: the gateway's configurations are webhooks/lifecycle/hook-configuration.ts's, this one is always the caller's own. */
  name: string;
  target: WebhookTarget;
  /** PEM of the CA(s) that signed the serving certificate; omitted when cert-manager's cainjector fills it. */
  caBundlePem?: string;
  failurePolicy?: FailurePolicy;
  /** 1..5 seconds; the API server waits this long before applying failurePolicy. */
  timeoutSeconds?: number;
  /** Namespaces never sent to the webhook: kube-system and kubeloop's own are always added. */
  excludedNamespaces?: string[];
  /** kubeloop's own namespace (excluded so the webhook never gates its own pods). */
  kubeloopNamespace: string;
  /** Restrict to these namespaces (tests register one configuration per test namespace). */
  onlyNamespaces?: string[];
}

/** CEL: the pod carries the opt-in annotation. Evaluated by the API server before it calls us. */
export const OPT_IN_MATCH_CONDITION = `has(object.metadata.annotations) && '${WATCHER_ANNOTATION}' in object.metadata.annotations`;

function clientConfig(options: WebhookConfigurationOptions): AdmissionregistrationV1WebhookClientConfig {
  const caBundle = options.caBundlePem ? Buffer.from(options.caBundlePem).toString('base64') : undefined;
  const base = 'url' in options.target
    ? { url: options.target.url }
    : { service: { name: options.target.service.name, namespace: options.target.service.namespace, path: MUTATE_PATH, port: options.target.service.port ?? 443 } };
  return caBundle ? { ...base, caBundle } : base;
}

export function buildWebhookConfiguration(options: WebhookConfigurationOptions): V1MutatingWebhookConfiguration {
  const timeoutSeconds = options.timeoutSeconds ?? 5;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 5) {
    throw new Error(`timeoutSeconds: must be an integer from 1 to 5, got ${timeoutSeconds}`);
  }
  const matchExpressions = namespaceSafetyExpressions(options);
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: options.name, labels: { 'app.kubernetes.io/part-of': 'kubeloop', 'app.kubernetes.io/component': 'webhook' } },
    webhooks: [
      {
        name: WEBHOOK_NAME,
        admissionReviewVersions: ['v1'],
        clientConfig: clientConfig(options),
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
        matchPolicy: 'Equivalent',
        namespaceSelector: { matchExpressions },
        // objectSelector can only see labels; the opt-in is an annotation, so filter with CEL instead.
        matchConditions: [{ name: 'opted-in', expression: OPT_IN_MATCH_CONDITION }],
        sideEffects: 'None',
        timeoutSeconds,
        failurePolicy: options.failurePolicy ?? 'Ignore',
        // Other mutating webhooks may add containers after us; being re-run lets us see the final pod.
        reinvocationPolicy: 'IfNeeded',
      },
    ],
  };
}
