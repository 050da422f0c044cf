// The Mutating- and ValidatingWebhookConfiguration the gateway owns, built from the resolved
// AdmissionHooks: one webhook entry and one path (/admit/<hook>) per hook, the CA injected, and the safe
// defaults no hook can override (sideEffects None, v1 reviews, kube-system and kubeloop excluded).
import type {
  AdmissionregistrationV1WebhookClientConfig,
  V1LabelSelector,
  V1MutatingWebhook,
  V1MutatingWebhookConfiguration,
  V1ValidatingWebhook,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { namespaceSafetyExpressions, type NamespaceSafety } from './configuration.ts';
import { HOOK_WEBHOOK_SUFFIX, type ResolvedHook } from './hook-spec.ts';

export const DEFAULT_HOOK_CONFIGURATION_NAME = 'kubeloop-admission-hooks';

/** How the API server reaches the gateway: a URL base (dev mode) or the gateway's Service. */
export type GatewayTarget = { urlBase: string } | { service: { name: string; namespace: string; port?: number } };

export interface HookConfigurationOptions extends NamespaceSafety {
  /** Name of both configurations. */
  name: string;
  target: GatewayTarget;
  caBundlePem?: string;
}

const LABELS = { 'app.kubernetes.io/part-of': 'kubeloop', 'app.kubernetes.io/component': 'webhook', 'kubeloop.dev/owned-by': 'admission-gateway' };

function clientConfig(hook: ResolvedHook, options: HookConfigurationOptions): AdmissionregistrationV1WebhookClientConfig {
  const base: AdmissionregistrationV1WebhookClientConfig =
    'urlBase' in options.target
      ? { url: `${options.target.urlBase}${hook.path}` }
      : { service: { ...options.target.service, port: options.target.service.port ?? 443, path: hook.path } };
  return options.caBundlePem ? { ...base, caBundle: Buffer.from(options.caBundlePem).toString('base64') } : base;
}

/** The hook's own namespaceSelector with the safety expressions ANDed in. */
function namespaceSelector(hook: ResolvedHook, options: HookConfigurationOptions): V1LabelSelector {
  const own = hook.spec.namespaceSelector ?? {};
  return { ...own, matchExpressions: [...(own.matchExpressions ?? []), ...namespaceSafetyExpressions(options)] };
}

function webhookOf(hook: ResolvedHook, options: HookConfigurationOptions): V1ValidatingWebhook {
  const spec = hook.spec;
  return {
    name: `${hook.name}.${HOOK_WEBHOOK_SUFFIX}`,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(hook, options),
    rules: spec.rules.map((rule) => ({ ...rule, scope: rule.scope ?? '*' })),
    matchPolicy: 'Equivalent',
    namespaceSelector: namespaceSelector(hook, options),
    objectSelector: spec.objectSelector ?? {},
    ...(spec.matchConditions?.length ? { matchConditions: spec.matchConditions } : {}),
    // Functions are pure and the gateway writes nothing per request: dry-run requests are safe to send.
    sideEffects: 'None',
    timeoutSeconds: spec.timeoutSeconds,
    failurePolicy: spec.failurePolicy,
  };
}

/** Hooks sorted by name so the configurations do not churn when the cache order changes. */
function byName(hooks: Iterable<ResolvedHook>): ResolvedHook[] {
  return [...hooks].sort((a, b) => a.name.localeCompare(b.name));
}

export function buildHookConfigurations(hooks: Iterable<ResolvedHook>, options: HookConfigurationOptions): {
  mutating: V1MutatingWebhookConfiguration;
  validating: V1ValidatingWebhookConfiguration;
} {
  const sorted = byName(hooks);
  const mutating: V1MutatingWebhook[] = sorted
    .filter((hook) => hook.spec.type === 'mutating')
    .map((hook) => ({ ...webhookOf(hook, options), reinvocationPolicy: hook.spec.reinvocationPolicy ?? 'Never' }));
  const validating = sorted.filter((hook) => hook.spec.type === 'validating').map((hook) => webhookOf(hook, options));
  const metadata = { name: options.name, labels: LABELS };
  return {
    mutating: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata, webhooks: mutating },
    validating: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata, webhooks: validating },
  };
}
