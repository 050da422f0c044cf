// Bounds on what one hook may put into the webhook configurations every hook shares, and what a namespaced
// hook may never intercept: kubeloop's own API groups (a team's hook on admissionhooks/status could hold the
// gateway's status writes, on loops the router's). Pure: problems come back as InvalidSpec messages.
import type { AdmissionHookSpec } from '../../api/admission-hook.ts';

/** Default of --max-hook-entry-bytes: what one hook's rules, selectors and matchConditions may take. */
export const DEFAULT_MAX_HOOK_ENTRY_BYTES = 32 * 1024;

/**
 * The API groups of kubeloop's own control objects: kubeloop.dev (Loops, AdmissionHooks and their status) and
 * history.kubeloop.dev, and "*", which includes them. The seed kinds' groups (app., cnat., watch.kubeloop.dev)
 * are a team's objects like any other and stay open.
 */
const KUBELOOP_GROUPS = new Set(['*', 'kubeloop.dev', 'history.kubeloop.dev']);
const reachesKubeloop = (group: string): boolean => KUBELOOP_GROUPS.has(group);

/** The bytes of the hook's spec that go into its webhook entry. */
export function hookEntryBytes(spec: AdmissionHookSpec): number {
  const { rules, namespaceSelector, objectSelector, matchConditions } = spec;
  return Buffer.byteLength(JSON.stringify({ rules, namespaceSelector, objectSelector, matchConditions }));
}

export function hookBoundProblems(spec: AdmissionHookSpec, namespace: string | undefined, maxEntryBytes = DEFAULT_MAX_HOOK_ENTRY_BYTES): string[] {
  const problems: string[] = [];
  const bytes = hookEntryBytes(spec);
  if (bytes > maxEntryBytes) {
    problems.push(`rules, selectors and matchConditions take ${bytes} bytes, over the ${maxEntryBytes} one hook's webhook entry may take (--max-hook-entry-bytes): every hook shares the webhook configurations, which etcd bounds`);
  }
  if (namespace) {
    (Array.isArray(spec.rules) ? spec.rules : []).forEach((rule, i) => {
      const group = (rule.apiGroups ?? []).find(reachesKubeloop);
      if (group !== undefined) problems.push(`rules[${i}]: apiGroup "${group}" reaches kubeloop's own resources (kubeloop.dev, history.kubeloop.dev), which an AdmissionHook may not intercept; name the API groups you mean`);
    });
  }
  return problems;
}
