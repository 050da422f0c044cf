// One table of what a namespace admin's Loop or AdmissionHook may not say, for both sides that refuse it: the
// TypeScript checks (router parseLoop, gateway resolveHook; test/chart/admission-policy-cases.test.ts) and the
// chart's ValidatingAdmissionPolicies on the real API server (test/e2e/admission-policy-table.test.ts). A field
// the TypeScript refuses is therefore refused by the policy too. The namespaced hooks' rule rows come from the
// gateway's own table (webhooks/base/namespaced-hook-rules.ts).
import { NEVER_FOR_NAMESPACED_HOOKS } from '../../webhooks/base/namespaced-hook-rules.ts';

export type PolicyKind = 'Loop' | 'AdmissionHook';

export interface PolicyCase {
  name: string;
  kind: PolicyKind;
  /** The spec fields that differ from the admitted baseline, given the object's namespace and another one. */
  spec: (own: string, other: string) => Record<string, unknown>;
  /** What the policy's refusal says (a substring). */
  policy: string;
}

const METADATA = 'http://169.254.169.254/latest';
const canary = { weight: 10, errorBudget: { maxErrors: 3, windowSeconds: 60 } };

/** The Loop every case starts from: admitted by the policy and by parseLoop. */
export const loopBaseline = (own: string): Record<string, unknown> => ({
  for: { apiVersion: 'v1', kind: 'ConfigMap' },
  serviceAccount: { name: 'runner' },
  function: { url: `http://fn.${own}.svc:8080/` },
});

/** The AdmissionHook every case starts from: a validating hook on ConfigMaps, admitted by both. */
export const hookBaseline = (own: string): Record<string, unknown> => ({
  type: 'validating',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  serviceAccount: { name: 'gate' },
  function: { service: { name: 'fn', namespace: own, port: 8080 } },
});

const rule = (apiGroups: string[], resources: string[]) => [{ operations: ['UPDATE'], apiGroups, apiVersions: ['*'], resources }];

export const POLICY_CASES: readonly PolicyCase[] = [
  // Loops: confinement and URLs of the live function, its shadow and its canary.
  { name: 'a ServiceAccount of another namespace', kind: 'Loop', spec: (_, other) => ({ serviceAccount: { name: 'runner', namespace: other } }), policy: 'a Loop acts as a ServiceAccount of its own namespace' },
  { name: 'a function ref in another namespace', kind: 'Loop', spec: (_, other) => ({ function: { ref: { name: 'fn', namespace: other, port: 8080 } } }), policy: 'a Loop calls a function of its own namespace' },
  { name: 'a signing Secret in another namespace', kind: 'Loop', spec: (own, other) => ({ function: { url: `http://fn.${own}.svc:8080/`, signingSecretRef: { name: 's', namespace: other, key: 'secret' } } }), policy: 'reads its signing Secret in its own namespace' },
  { name: 'a shadow ref in another namespace', kind: 'Loop', spec: (own, other) => ({ function: { url: `http://fn.${own}.svc:8080/`, shadow: { ref: { name: 'fn', namespace: other, port: 8080 } } } }), policy: 'the shadow and the canary of a Loop call a function and read a signing Secret of its own namespace' },
  { name: 'a shadow signing Secret in another namespace', kind: 'Loop', spec: (own, other) => ({ function: { url: `http://fn.${own}.svc:8080/`, shadow: { url: `http://fn2.${own}.svc:8080/`, signingSecretRef: { name: 's', namespace: other, key: 'secret' } } } }), policy: 'the shadow and the canary of a Loop' },
  { name: 'a canary ref in another namespace', kind: 'Loop', spec: (own, other) => ({ function: { url: `http://fn.${own}.svc:8080/`, canary: { ...canary, ref: { name: 'fn', namespace: other, port: 8080 } } } }), policy: 'the shadow and the canary of a Loop' },
  { name: 'a canary signing Secret in another namespace', kind: 'Loop', spec: (own, other) => ({ function: { url: `http://fn.${own}.svc:8080/`, canary: { ...canary, url: `http://fn2.${own}.svc:8080/`, signingSecretRef: { name: 's', namespace: other, key: 'secret' } } } }), policy: 'the shadow and the canary of a Loop' },
  { name: 'another namespace watched', kind: 'Loop', spec: (_, other) => ({ namespaces: [other] }), policy: 'a Loop watches its own namespace' },
  { name: 'related objects of another namespace', kind: 'Loop', spec: (_, other) => ({ related: [{ name: 'cfg', apiVersion: 'v1', kind: 'ConfigMap', namespace: other, selector: { matchLabels: { a: 'b' } } }] }), policy: 'a Loop reads related objects in its own namespace' },
  { name: 'the metadata address', kind: 'Loop', spec: () => ({ function: { url: METADATA } }), policy: 'spec.function.url: host 169.254.169.254 is an IP literal' },
  { name: 'a shadow at the metadata address', kind: 'Loop', spec: (own) => ({ function: { url: `http://fn.${own}.svc:8080/`, shadow: { url: METADATA } } }), policy: 'spec.function.shadow.url: host 169.254.169.254 is an IP literal' },
  { name: 'a canary at the API server', kind: 'Loop', spec: (own) => ({ function: { url: `http://fn.${own}.svc:8080/`, canary: { ...canary, url: 'https://kubernetes.default.svc/' } } }), policy: 'spec.function.canary.url: host kubernetes.default.svc is the Kubernetes API server' },
  // AdmissionHooks: confinement, URLs, what no webhook may see, what no namespaced hook may match.
  { name: 'a ServiceAccount of another namespace', kind: 'AdmissionHook', spec: (_, other) => ({ serviceAccount: { name: 'gate', namespace: other } }), policy: 'an AdmissionHook runs as a ServiceAccount of its own namespace' },
  { name: 'a Service of another namespace', kind: 'AdmissionHook', spec: (_, other) => ({ function: { service: { name: 'fn', namespace: other, port: 8080 } } }), policy: 'an AdmissionHook calls a Service of its own namespace' },
  { name: 'a signing Secret of another namespace', kind: 'AdmissionHook', spec: (own, other) => ({ function: { service: { name: 'fn', namespace: own, port: 8080 }, signingSecretRef: { name: 's', namespace: other, key: 'secret' } } }), policy: 'an AdmissionHook signs with a Secret of its own namespace' },
  { name: 'a shadow Service of another namespace', kind: 'AdmissionHook', spec: (own, other) => ({ function: { service: { name: 'fn', namespace: own, port: 8080 }, shadow: { service: { name: 'fn', namespace: other, port: 8080 } } } }), policy: 'the shadow of an AdmissionHook' },
  { name: 'a canary taking another namespace\'s requests', kind: 'AdmissionHook', spec: (own, other) => ({ function: { service: { name: 'fn', namespace: own, port: 8080 }, canary: { ...canary, service: { name: 'fn2', namespace: own, port: 8080 }, namespaces: [other] } } }), policy: 'the canary of an AdmissionHook' },
  { name: 'context of another namespace', kind: 'AdmissionHook', spec: (_, other) => ({ context: [{ name: 'cfg', apiVersion: 'v1', kind: 'ConfigMap', objectName: { value: 'x' }, namespace: other }] }), policy: 'an AdmissionHook reads context objects of its own namespace' },
  { name: 'a cluster-scoped rule', kind: 'AdmissionHook', spec: () => ({ rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: 'Cluster' }] }), policy: 'an AdmissionHook sees only namespaced objects' },
  { name: 'a namespaceSelector', kind: 'AdmissionHook', spec: () => ({ namespaceSelector: { matchLabels: { a: 'b' } } }), policy: 'spec.namespaceSelector: an AdmissionHook sees only its own namespace' },
  { name: 'a function URL at the metadata address', kind: 'AdmissionHook', spec: () => ({ function: { url: METADATA } }), policy: 'spec.function.url: host 169.254.169.254 is an IP literal' },
  { name: 'a shadow URL at the metadata address', kind: 'AdmissionHook', spec: (own) => ({ function: { service: { name: 'fn', namespace: own, port: 8080 }, shadow: { url: METADATA } } }), policy: 'spec.function.shadow.url: host 169.254.169.254 is an IP literal' },
  { name: 'a canary URL on loopback', kind: 'AdmissionHook', spec: (own) => ({ function: { service: { name: 'fn', namespace: own, port: 8080 }, canary: { ...canary, url: 'http://localhost:8080/' } } }), policy: 'spec.function.canary.url: host localhost is loopback' },
  { name: 'rules on leases', kind: 'AdmissionHook', spec: () => ({ rules: rule(['coordination.k8s.io'], ['leases']) }), policy: 'would send webhook configurations, admission policies or leases to a webhook' },
  { name: 'rules on webhook configurations', kind: 'AdmissionHook', spec: () => ({ rules: rule(['admissionregistration.k8s.io'], ['validatingwebhookconfigurations']) }), policy: 'would send webhook configurations, admission policies or leases' },
  { name: 'a timeout over the namespaced cap', kind: 'AdmissionHook', spec: () => ({ timeoutSeconds: 30 }), policy: 'spec.timeoutSeconds: a namespaced AdmissionHook waits at most 3 s' },
  { name: 'a mutating hook on resourcequotas/status', kind: 'AdmissionHook', spec: () => ({ type: 'mutating', rules: rule([''], ['resourcequotas/status']) }), policy: 'resource resourcequotas/status reaches' },
  { name: 'a mutating hook on pods/status', kind: 'AdmissionHook', spec: () => ({ type: 'mutating', rules: rule([''], ['pods/status']) }), policy: 'resource pods/status reaches' },
  { name: 'a mutating hook on services/status', kind: 'AdmissionHook', spec: () => ({ type: 'mutating', rules: rule([''], ['services/status']) }), policy: 'resource services/status reaches' },
  { name: 'a mutating hook on ingresses/status', kind: 'AdmissionHook', spec: () => ({ type: 'mutating', rules: rule(['networking.k8s.io'], ['ingresses/status']) }), policy: 'resource ingresses/status reaches' },
  { name: 'a validating hook on every subresource of pods', kind: 'AdmissionHook', spec: () => ({ rules: rule([''], ['pods/*']) }), policy: 'resource pods/* reaches' },
  { name: 'a validating wildcard reaching resourcequotas', kind: 'AdmissionHook', spec: () => ({ rules: rule([''], ['*']) }), policy: 'resource * reaches' },
  { name: 'a mutating wildcard', kind: 'AdmissionHook', spec: () => ({ type: 'mutating', rules: rule(['apps'], ['*']) }), policy: 'a namespaced mutating AdmissionHook names each group and resource it changes; no wildcards' },
  // Each row of the gateway's table, as a mutating and as a validating hook.
  ...NEVER_FOR_NAMESPACED_HOOKS.flatMap((never): PolicyCase[] =>
    (['mutating', 'validating'] as const).map((type) => ({
      name: `a ${type} hook on ${never.resource}`,
      kind: 'AdmissionHook',
      spec: () => ({ type, rules: rule([never.group], [never.resource]) }),
      policy: `resource ${never.resource} reaches`,
    })),
  ),
];

/** The object a case creates in `own`: the baseline with the case's fields laid over it. */
export function caseObject(c: Pick<PolicyCase, 'kind' | 'spec'> | { kind: PolicyKind; spec?: undefined }, name: string, own: string, other: string, labels: Record<string, string> = {}) {
  const baseline = c.kind === 'Loop' ? loopBaseline(own) : hookBaseline(own);
  return { apiVersion: 'kubeloop.dev/v1alpha1', kind: c.kind, metadata: { name, namespace: own, labels }, spec: { ...baseline, ...(c.spec ? c.spec(own, other) : {}) } };
}
