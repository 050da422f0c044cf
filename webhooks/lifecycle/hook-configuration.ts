// The Mutating- and ValidatingWebhookConfiguration the gateway owns, built from the resolved hooks: one
// webhook entry and one path (/admit/<hook>) per ClusterAdmissionHook, one entry per group of namespaced
// AdmissionHooks (hook-groups.ts), the CA injected, and the safe defaults no hook can override (sideEffects
// None, v1 reviews, kube-system and kubeloop excluded).
import type {
  AdmissionregistrationV1WebhookClientConfig,
  V1LabelSelector,
  V1MutatingWebhook,
  V1MutatingWebhookConfiguration,
  V1ValidatingWebhook,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import type { HookMatchCondition } from '../../api/admission-hook.ts';
import { NAMESPACE_NAME_LABEL, namespaceSafetyExpressions, type NamespaceSafety } from './namespace-safety.ts';
import { shapeOf, type HookGroup, type HookShape } from '../base/hook-groups.ts';
import { HOOK_WEBHOOK_SUFFIX, type ResolvedHook } from '../base/hook-spec.ts';

export const DEFAULT_HOOK_CONFIGURATION_NAME = 'kubeloop-admission-hooks';

/** How the API server reaches the gateway: a URL base (dev mode) or the gateway's Service. */
export type GatewayTarget = { urlBase: string } | { service: { name: string; namespace: string; port?: number } };

export interface HookConfigurationOptions extends NamespaceSafety {
  /** Name of both configurations. */
  name: string;
  target: GatewayTarget;
  caBundlePem?: string;
  /** ANDed into every namespaced entry: shared controllers' requests never wait on a tenant's hook (excluded-identities.ts). */
  namespacedCondition?: HookMatchCondition;
}

const LABELS = { 'app.kubernetes.io/part-of': 'kubeloop', 'app.kubernetes.io/component': 'webhook', 'kubeloop.dev/owned-by': 'admission-gateway' };

function clientConfig(path: string, options: HookConfigurationOptions): AdmissionregistrationV1WebhookClientConfig {
  const base: AdmissionregistrationV1WebhookClientConfig =
    'urlBase' in options.target
      ? { url: `${options.target.urlBase}${path}` }
      : { service: { ...options.target.service, port: options.target.service.port ?? 443, path } };
  return options.caBundlePem ? { ...base, caBundle: Buffer.from(options.caBundlePem).toString('base64') } : base;
}

/** A selector with the safety expressions ANDed in. */
function withSafety(own: V1LabelSelector, options: HookConfigurationOptions): V1LabelSelector {
  return { ...own, matchExpressions: [...(own.matchExpressions ?? []), ...namespaceSafetyExpressions(options)] };
}

interface Entry {
  name: string;
  path: string;
  shape: HookShape;
  namespaceSelector: V1LabelSelector;
  /** The gateway's own conditions, after the hook's. */
  conditions?: HookMatchCondition[];
}

function webhookOf(entry: Entry, options: HookConfigurationOptions): V1MutatingWebhook {
  const { shape } = entry;
  return {
    name: entry.name,
    admissionReviewVersions: ['v1'],
    clientConfig: clientConfig(entry.path, options),
    rules: shape.rules.map((rule) => ({ ...rule, scope: rule.scope ?? '*' })),
    matchPolicy: 'Equivalent',
    namespaceSelector: withSafety(entry.namespaceSelector, options),
    objectSelector: shape.objectSelector,
    ...(shape.matchConditions.length || entry.conditions?.length ? { matchConditions: [...shape.matchConditions, ...(entry.conditions ?? [])] } : {}),
    // Functions are pure and the gateway writes nothing per request: dry-run requests are safe to send.
    sideEffects: 'None',
    timeoutSeconds: shape.timeoutSeconds,
    failurePolicy: shape.failurePolicy,
    ...(shape.type === 'mutating' ? { reinvocationPolicy: shape.reinvocationPolicy ?? 'Never' } : {}),
  };
}

/** A ClusterAdmissionHook's own entry: its path, its namespaceSelector. */
function clusterEntry(hook: ResolvedHook): Entry {
  return { name: `${hook.name}.${HOOK_WEBHOOK_SUFFIX}`, path: hook.path, shape: shapeOf(hook), namespaceSelector: hook.spec.namespaceSelector ?? {} };
}

/** A group's entry: the namespaces of its hooks, and nothing else, are sent to it. */
function groupEntry(group: HookGroup, options: HookConfigurationOptions): Entry {
  const namespaces = [...group.members.keys()];
  return {
    name: `${group.id}.namespaced.${HOOK_WEBHOOK_SUFFIX}`,
    path: group.path,
    shape: group.shape,
    namespaceSelector: { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'In', values: namespaces }] },
    ...(options.namespacedCondition ? { conditions: [options.namespacedCondition] } : {}),
  };
}

/**
 * The two configurations: the ClusterAdmissionHooks' entries sorted by name, then the groups' sorted by id,
 * so they do not churn when the cache order changes. `hooks` holds ClusterAdmissionHooks (namespaced ones
 * reach the API server only through `groups`).
 */
export function buildHookConfigurations(hooks: Iterable<ResolvedHook>, options: HookConfigurationOptions, groups: readonly HookGroup[] = []): {
  mutating: V1MutatingWebhookConfiguration;
  validating: V1ValidatingWebhookConfiguration;
} {
  const entries = [
    ...[...hooks].filter((hook) => !hook.namespace).sort((a, b) => a.name.localeCompare(b.name)).map(clusterEntry),
    ...[...groups].sort((a, b) => a.id.localeCompare(b.id)).map((group) => groupEntry(group, options)),
  ];
  const mutating = entries.filter((entry) => entry.shape.type === 'mutating').map((entry) => webhookOf(entry, options));
  const validating: V1ValidatingWebhook[] = entries
    .filter((entry) => entry.shape.type === 'validating')
    .map((entry) => webhookOf(entry, options));
  const metadata = { name: options.name, labels: LABELS };
  return {
    mutating: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata, webhooks: mutating },
    validating: { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata, webhooks: validating },
  };
}
