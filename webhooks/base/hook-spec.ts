// Checks a ClusterAdmissionHook's or AdmissionHook's spec beyond what the CRD schema can (timeouts, rules a
// webhook may not intercept, the function address by the Loops' URL rules, its ServiceAccount, context names,
// a namespaced hook's confinement) and resolves it into what the gateway serves. Pure: bad specs come back
// as a reason and message for the Ready condition.
import type { AdmissionHook, AdmissionHookSpec, HookContextEntry } from '../../api/admission-hook.ts';
import type { ServiceAccountRef } from '../../api/loop.ts';
import { DEFAULT_FUNCTION_URL_POLICY, functionUrlProblem, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import { confineToNamespace } from './hook-confinement.ts';
import { hookBoundProblems } from './hook-bounds.ts';
import { DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS, namespacedRuleProblems } from './namespaced-hook-rules.ts';
import { namespacedConditionsProblem } from './excluded-identities.ts';
import { sensitiveRuleProblems, type SensitiveCategory } from './sensitive-resources.ts';
import { resolveHookVersions, type HookVersions } from './hook-versions-spec.ts';
import { functionUrlOf } from './function-url.ts';

/** kubeloop.dev suffix of every webhook name the gateway registers: <hook>.hooks.kubeloop.dev. */
export const HOOK_WEBHOOK_SUFFIX = 'hooks.kubeloop.dev';
export const HOOK_PATH_PREFIX = '/admit/';
/** Namespaced hooks are served at /admit-namespaced/<group>; the request's namespace picks the hook (hook-groups.ts). */
export const HOOK_GROUP_PATH_PREFIX = '/admit-namespaced/';
export const MIN_TIMEOUT_SECONDS = 1;
export const MAX_TIMEOUT_SECONDS = 30;
export const DEFAULT_TIMEOUT_SECONDS = 5;

export interface ResolvedHook {
  /** The hook's identity in maps, metrics, logs and its signing audience: <namespace>/<name>, or <name> for a ClusterAdmissionHook. */
  id: string;
  name: string;
  /** An AdmissionHook's namespace (the only one it sees); undefined for a ClusterAdmissionHook. */
  namespace?: string;
  /** metadata.generation the resolution is of, for status.observedGeneration. */
  generation?: number;
  uid?: string;
  spec: AdmissionHookSpec & { failurePolicy: 'Ignore' | 'Fail'; timeoutSeconds: number; serviceAccount: ServiceAccountRef };
  /**
   * Where the API server calls: /admit/<name> for a ClusterAdmissionHook; for an AdmissionHook the path of
   * the webhook entry its namespace shares with hooks of the same shape (hook-groups.ts), '' until grouped.
   */
  path: string;
  /** Where the gateway POSTs the AdmissionRequest. */
  functionUrl: string;
  /** What the function gets: the API server's timeout less a margin, so our failure message reaches the client. */
  functionTimeoutMs: number;
  context: HookContextEntry[];
  /** spec.function.shadow and spec.function.canary, resolved (hook-versions-spec.ts). */
  versions: HookVersions;
}

export type HookResolution = { ok: true; hook: ResolvedHook } | { ok: false; reason: 'InvalidSpec' | 'ServiceAccountRequired'; message: string };

/** What an operator decides for every hook: where functions may live, which sensitive resources hooks may see. */
export interface HookPolicy {
  urlPolicy: FunctionUrlPolicy;
  allowedResources: readonly SensitiveCategory[];
  /** --max-hook-entry-bytes (hook-bounds.ts). */
  maxEntryBytes?: number;
  /** The longest timeoutSeconds of a namespaced hook, and its default when lower than 5 (--namespaced-hook-max-timeout-seconds). */
  namespacedMaxTimeoutSeconds: number;
}

export const DEFAULT_HOOK_POLICY: HookPolicy = { urlPolicy: DEFAULT_FUNCTION_URL_POLICY, allowedResources: [], namespacedMaxTimeoutSeconds: DEFAULT_NAMESPACED_MAX_TIMEOUT_SECONDS };
/** `kubeloop webhook --dev`, benchmarks and tests: functions on 127.0.0.1 as well. */
export const DEV_HOOK_POLICY: HookPolicy = { ...DEFAULT_HOOK_POLICY, urlPolicy: { ...DEFAULT_FUNCTION_URL_POLICY, allowLoopback: true } };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** An object name (DNS subdomain): never "<namespace>/<name>", which would reach into another namespace. */
export const OBJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isObjectName(name: string): boolean {
  return name.length <= 253 && OBJECT_NAME.test(name);
}

/** Requests a webhook may never see: intercepting them could lock the cluster (or us) out. */
const FORBIDDEN_RESOURCES = new Map([
  ['admissionregistration.k8s.io', new Set(['*', 'mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings'])],
  ['coordination.k8s.io', new Set(['*', 'leases'])],
]);

function ruleProblems(spec: AdmissionHookSpec): string[] {
  const problems: string[] = [];
  spec.rules.forEach((rule, i) => {
    for (const group of rule.apiGroups) {
      const forbidden = group === '*' ? [...FORBIDDEN_RESOURCES.values()].flatMap((s) => [...s]) : [...(FORBIDDEN_RESOURCES.get(group) ?? [])];
      const hit = rule.resources.find((r) => forbidden.includes(r.split('/')[0] ?? '') || (r.startsWith('*') && forbidden.length > 0));
      if (hit) problems.push(`rules[${i}]: ${group === '*' ? 'apiGroups "*" with' : `apiGroup "${group}",`} resource "${hit}" would send webhook configurations or leases to a webhook; name the resources you mean`);
    }
  });
  return problems;
}

/** Leaves the function enough time to answer and the gateway enough to tell the client why it did not. */
export function functionTimeoutMs(timeoutSeconds: number): number {
  const total = timeoutSeconds * 1000;
  return total - Math.min(500, Math.round(total * 0.2));
}

function contextProblem(entry: HookContextEntry): string | undefined {
  const sources = ['annotation', 'label', 'fieldPath', 'value'].filter((key) => typeof entry.objectName?.[key as keyof typeof entry.objectName] === 'string');
  if (sources.length !== 1) return `context "${entry.name}": objectName needs exactly one of annotation, label, fieldPath, value`;
  if (entry.objectName.value !== undefined && !isObjectName(entry.objectName.value)) return `context "${entry.name}": objectName.value "${entry.objectName.value}" is not an object name (the namespace comes from namespace, never from the name)`;
  if (entry.namespace !== undefined && entry.namespace !== 'Same' && !(DNS_LABEL.test(entry.namespace) && entry.namespace.length <= 63)) {
    return `context "${entry.name}": namespace must be "Same" or a namespace name, got ${JSON.stringify(entry.namespace)}`;
  }
  return undefined;
}

export function resolveHook(hook: AdmissionHook, policy: HookPolicy = DEFAULT_HOOK_POLICY): HookResolution {
  const name = hook.metadata?.name ?? '';
  const namespace = hook.metadata?.namespace || undefined;
  const invalid = (message: string): HookResolution => ({ ok: false, reason: 'InvalidSpec', message });
  if (!hook.spec) return invalid('spec is missing');
  const confined = namespace ? confineToNamespace(hook.spec, namespace) : { ok: true as const, spec: hook.spec };
  if (!confined.ok) return invalid(confined.message);
  const spec = confined.spec;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63) return invalid(`name "${name}" must be a DNS label: it becomes ${HOOK_PATH_PREFIX}<name>`);
  if (spec.type !== 'mutating' && spec.type !== 'validating') return invalid(`type must be mutating or validating, got ${JSON.stringify(spec.type)}`);
  // A namespaced hook delays shared controllers' workers for as long as it takes: its timeout is capped low.
  const maxTimeout = namespace ? Math.min(policy.namespacedMaxTimeoutSeconds, MAX_TIMEOUT_SECONDS) : MAX_TIMEOUT_SECONDS;
  const timeoutSeconds = spec.timeoutSeconds ?? Math.min(DEFAULT_TIMEOUT_SECONDS, maxTimeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < MIN_TIMEOUT_SECONDS || timeoutSeconds > maxTimeout) {
    const cap = namespace ? ` (a namespaced AdmissionHook waits at most ${maxTimeout} s: the operator's --namespaced-hook-max-timeout-seconds)` : '';
    return invalid(`timeoutSeconds must be an integer from ${MIN_TIMEOUT_SECONDS} to ${maxTimeout}${cap}, got ${timeoutSeconds}`);
  }
  if (spec.type === 'validating' && spec.reinvocationPolicy && spec.reinvocationPolicy !== 'Never') {
    return invalid('reinvocationPolicy applies to mutating hooks only');
  }
  if (!Array.isArray(spec.rules) || spec.rules.length === 0) return invalid('rules: give at least one rule');
  const conditionsProblem = namespace ? namespacedConditionsProblem(spec.matchConditions) : undefined;
  const problems = [
    ...ruleProblems(spec),
    ...sensitiveRuleProblems(spec.rules, policy.allowedResources),
    ...(namespace ? namespacedRuleProblems(spec.rules, spec.type) : []),
    ...(conditionsProblem ? [conditionsProblem] : []),
    ...hookBoundProblems(spec, namespace, policy.maxEntryBytes),
  ];
  if (problems.length > 0) return invalid(problems.join('; '));
  if (spec.function?.url && spec.function.service) return invalid('function: give url or service, not both');
  const functionUrl = spec.function ? functionUrlOf(spec.function) : undefined;
  if (!functionUrl) return invalid('function: give a url or a service');
  const urlProblem = functionUrlProblem(functionUrl, policy.urlPolicy);
  if (urlProblem) return invalid(`function ${functionUrl}: ${urlProblem}`);
  const versions = resolveHookVersions(spec.function, policy.urlPolicy);
  if (typeof versions === 'string') return invalid(versions);
  const context = spec.context ?? [];
  const names = new Set<string>();
  for (const entry of context) {
    if (names.has(entry.name)) return invalid(`context: the name "${entry.name}" is used twice`);
    names.add(entry.name);
    const problem = contextProblem(entry);
    if (problem) return invalid(problem);
  }
  const serviceAccount = spec.serviceAccount;
  if (!serviceAccount?.namespace || !serviceAccount.name) {
    const shape = namespace ? '{ name }' : '{ namespace, name }';
    return { ok: false, reason: 'ServiceAccountRequired', message: `spec.serviceAccount ${shape} is required: the gateway reads context objects as that ServiceAccount` };
  }
  return {
    ok: true,
    hook: {
      id: objectKey({ name, ...(namespace ? { namespace } : {}) }),
      name,
      ...(namespace ? { namespace } : {}),
      ...(hook.metadata?.generation !== undefined ? { generation: hook.metadata.generation } : {}),
      ...(hook.metadata?.uid ? { uid: hook.metadata.uid } : {}),
      // A validating hook that cannot run must not pass what it was meant to check.
      spec: { ...spec, failurePolicy: spec.failurePolicy ?? (spec.type === 'validating' ? 'Fail' : 'Ignore'), timeoutSeconds, serviceAccount },
      path: namespace ? '' : `${HOOK_PATH_PREFIX}${name}`,
      functionUrl,
      functionTimeoutMs: functionTimeoutMs(timeoutSeconds),
      context,
      versions,
    },
  };
}
