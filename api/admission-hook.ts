// The AdmissionHook (namespaced) and ClusterAdmissionHook (cluster-scoped) resources, kubeloop.dev/v1alpha1: bind
// admission of some resources to an admission function, with the context objects the gateway sends along. One
// spec for both; an AdmissionHook sees only its own namespace. CRDs: charts/kubeloop/charts/crds/crds/. Checks: webhooks/base/hook-spec.ts.
import type { V1LabelSelector, V1ObjectMeta } from '@kubernetes/client-node';
import type { CanaryErrorBudget, SecretKeyRef, ServiceAccountRef } from './loop.ts';
import type { Condition } from './meta.ts';

export const ADMISSION_HOOK_GROUP = 'kubeloop.dev';
export const ADMISSION_HOOK_VERSION = 'v1alpha1';
export const ADMISSION_HOOK_API_VERSION = `${ADMISSION_HOOK_GROUP}/${ADMISSION_HOOK_VERSION}`;
/** The namespaced kind, which a namespace admin owns (docs/tenants.md). */
export const ADMISSION_HOOK_KIND = 'AdmissionHook';
export const ADMISSION_HOOK_PLURAL = 'admissionhooks';
/** The cluster-scoped kind, for cluster admins. */
export const CLUSTER_ADMISSION_HOOK_KIND = 'ClusterAdmissionHook';
export const CLUSTER_ADMISSION_HOOK_PLURAL = 'clusteradmissionhooks';

export type AdmissionHookType = 'mutating' | 'validating';
export type HookOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | '*';

/** admissionregistration.k8s.io/v1 RuleWithOperations. */
export interface HookRule {
  operations: HookOperation[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

/** A CEL expression the API server evaluates before calling the gateway (false: not sent). */
export interface HookMatchCondition {
  name: string;
  expression: string;
}

/** The function: a URL, or a Service in the cluster (https when port is 443, http otherwise). */
export interface HookFunction {
  url?: string;
  service?: { name: string; namespace: string; port?: number; path?: string };
  /** A Secret key holding a Standard Webhooks secret (`whsec_…`): requests are signed, replies must be. */
  signingSecretRef?: SecretKeyRef;
  /** Base64 of PEM CA certificates trusted for an https function (as in a Loop's spec.function.caBundle). */
  caBundle?: string;
  /** A second version asked about every request the live one gets; its answer is compared, never enforced (docs/safe-changes.md). */
  shadow?: HookFunctionVersion;
  /** A second version that answers a share of the requests, rolled back by itself when its error budget is spent. */
  canary?: HookCanary;
}

/** Another version of a hook's function: a URL or a Service, with its own signing Secret and CA bundle. */
export interface HookFunctionVersion {
  url?: string;
  service?: { name: string; namespace: string; port?: number; path?: string };
  signingSecretRef?: SecretKeyRef;
  caBundle?: string;
}

/**
 * A hook's canary: the requests in `namespaces` (all when omitted) and, of those, `weight` percent (by a
 * stable hash of the request uid; all when omitted) go to it. At least one of the two is required.
 */
export interface HookCanary extends HookFunctionVersion {
  weight?: number;
  namespaces?: string[];
  errorBudget: CanaryErrorBudget;
}

/**
 * Where the name of a context object comes from, read on the admitted object (object, or oldObject on
 * DELETE). Exactly one of annotation, label, fieldPath (a dotted path such as spec.serviceAccountName)
 * or value (a fixed name).
 */
export interface ContextName {
  annotation?: string;
  label?: string;
  fieldPath?: string;
  value?: string;
}

/** One object the gateway looks up in its informer cache and sends as request.context[name]. */
export interface HookContextEntry {
  /** The key in request.context. */
  name: string;
  apiVersion: string;
  kind: string;
  objectName: ContextName;
  /**
   * "Same" (the admitted object's namespace, default; the ServiceAccount must then be allowed to get the kind in every
   * namespace) or one fixed namespace; ignored for cluster-scoped kinds.
   */
  namespace?: string;
  /** Drop these top-level spec fields (large data the function never reads), e.g. ["configData"]. */
  omitFields?: string[];
}

export interface AdmissionHookSpec {
  type: AdmissionHookType;
  rules: HookRule[];
  matchConditions?: HookMatchCondition[];
  namespaceSelector?: V1LabelSelector;
  objectSelector?: V1LabelSelector;
  /** When the function fails: Fail rejects the request (validating default), Ignore admits it unchanged (mutating default). */
  failurePolicy?: 'Ignore' | 'Fail';
  /** 1..30, default 5: what the API server waits for the gateway; the gateway gives the function a little less. */
  timeoutSeconds?: number;
  /** Mutating only: Never (default) or IfNeeded. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  function: HookFunction;
  context?: HookContextEntry[];
  /**
   * The identity the hook acts as: the gateway sends a context object only when this ServiceAccount may get it
   * (SubjectAccessReview per kind and namespace), and only someone who may impersonate it may create or change
   * the hook (the chart's admission policy). Required. (A namespaced hook would name one of its own namespace.)
   */
  serviceAccount?: ServiceAccountRef;
}

export interface AdmissionHookStatus {
  observedGeneration?: number;
  conditions?: Condition[];
}

export interface AdmissionHook {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: AdmissionHookSpec;
  status?: AdmissionHookStatus;
}
