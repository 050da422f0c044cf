// Checks an AdmissionHook's spec beyond what the CRD schema can (timeouts, rules a webhook may not
// intercept, the function address) and resolves it into what the gateway serves: its path, the function
// URL, the timeout it gives the function. Pure: bad specs come back as a message for the Ready condition.
import type { AdmissionHook, AdmissionHookSpec, HookContextEntry } from '../api/admission-hook.ts';

/** kubeloop.dev suffix of every webhook name the gateway registers: <hook>.hooks.kubeloop.dev. */
export const HOOK_WEBHOOK_SUFFIX = 'hooks.kubeloop.dev';
export const HOOK_PATH_PREFIX = '/admit/';
export const MIN_TIMEOUT_SECONDS = 1;
export const MAX_TIMEOUT_SECONDS = 30;

export interface ResolvedHook {
  name: string;
  /** metadata.generation the resolution is of, for status.observedGeneration. */
  generation?: number;
  uid?: string;
  spec: AdmissionHookSpec & { failurePolicy: 'Ignore' | 'Fail'; timeoutSeconds: number };
  /** /admit/<name> on the gateway. */
  path: string;
  /** Where the gateway POSTs the AdmissionRequest. */
  functionUrl: string;
  /** What the function gets: the API server's timeout less a margin, so our failure message reaches the client. */
  functionTimeoutMs: number;
  context: HookContextEntry[];
}

export type HookResolution = { ok: true; hook: ResolvedHook } | { ok: false; reason: 'InvalidSpec'; message: string };

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

/** The function's URL: given, or the Service's cluster DNS name (https on port 443, http otherwise). */
export function functionUrlOf(fn: AdmissionHookSpec['function']): string | undefined {
  if (fn.url) return fn.url;
  if (!fn.service) return undefined;
  const port = fn.service.port ?? 80;
  const scheme = port === 443 ? 'https' : 'http';
  return `${scheme}://${fn.service.name}.${fn.service.namespace}.svc:${port}${fn.service.path ?? '/admit'}`;
}

/** Leaves the function enough time to answer and the gateway enough to tell the client why it did not. */
export function functionTimeoutMs(timeoutSeconds: number): number {
  const total = timeoutSeconds * 1000;
  return total - Math.min(500, Math.round(total * 0.2));
}

export function resolveHook(hook: AdmissionHook): HookResolution {
  const name = hook.metadata?.name ?? '';
  const spec = hook.spec;
  const invalid = (message: string): HookResolution => ({ ok: false, reason: 'InvalidSpec', message });
  if (!spec) return invalid('spec is missing');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63) return invalid(`name "${name}" must be a DNS label: it becomes ${HOOK_PATH_PREFIX}<name>`);
  if (spec.type !== 'mutating' && spec.type !== 'validating') return invalid(`type must be mutating or validating, got ${JSON.stringify(spec.type)}`);
  const timeoutSeconds = spec.timeoutSeconds ?? 5;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < MIN_TIMEOUT_SECONDS || timeoutSeconds > MAX_TIMEOUT_SECONDS) {
    return invalid(`timeoutSeconds must be an integer from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}, got ${timeoutSeconds}`);
  }
  if (spec.type === 'validating' && spec.reinvocationPolicy && spec.reinvocationPolicy !== 'Never') {
    return invalid('reinvocationPolicy applies to mutating hooks only');
  }
  if (!Array.isArray(spec.rules) || spec.rules.length === 0) return invalid('rules: give at least one rule');
  const problems = ruleProblems(spec);
  if (problems.length > 0) return invalid(problems.join('; '));
  if (spec.function?.url && spec.function.service) return invalid('function: give url or service, not both');
  const functionUrl = spec.function ? functionUrlOf(spec.function) : undefined;
  if (!functionUrl) return invalid('function: give a url or a service');
  try {
    const parsed = new URL(functionUrl);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return invalid(`function.url "${functionUrl}" must be http or https`);
  } catch {
    return invalid(`function.url "${functionUrl}" is not a URL`);
  }
  const context = spec.context ?? [];
  const names = new Set<string>();
  for (const entry of context) {
    if (names.has(entry.name)) return invalid(`context: the name "${entry.name}" is used twice`);
    names.add(entry.name);
    const sources = ['annotation', 'label', 'fieldPath', 'value'].filter((key) => typeof entry.objectName?.[key as keyof typeof entry.objectName] === 'string');
    if (sources.length !== 1) return invalid(`context "${entry.name}": objectName needs exactly one of annotation, label, fieldPath, value`);
  }
  return {
    ok: true,
    hook: {
      name,
      ...(hook.metadata?.generation !== undefined ? { generation: hook.metadata.generation } : {}),
      ...(hook.metadata?.uid ? { uid: hook.metadata.uid } : {}),
      spec: { ...spec, failurePolicy: spec.failurePolicy ?? 'Ignore', timeoutSeconds },
      path: `${HOOK_PATH_PREFIX}${name}`,
      functionUrl,
      functionTimeoutMs: functionTimeoutMs(timeoutSeconds),
      context,
    },
  };
}
