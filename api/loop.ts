// The Loop (namespaced, loops.kubeloop.dev) and ClusterLoop (cluster-scoped, clusterloops.kubeloop.dev) resources:
// bind a watched kind and the kinds it owns to a function. One spec for both; a Loop is confined to its namespace.
// CRDs: charts/kubeloop/charts/crds/crds/. Validation into the router's config: router/base/loop-spec.ts.
import type { V1LabelSelector, V1ObjectMeta } from '@kubernetes/client-node';
import type { Condition, KindRef } from './meta.ts';

export const LOOP_API_VERSION = 'kubeloop.dev/v1alpha1';
/** The namespaced kind, which a namespace admin owns (docs/tenants.md). */
export const LOOP_KIND = 'Loop';
export const LOOP_PLURAL = 'loops';
/** The cluster-scoped kind, for cluster admins. */
export const CLUSTER_LOOP_KIND = 'ClusterLoop';
export const CLUSTER_LOOP_PLURAL = 'clusterloops';
export type LoopKind = typeof LOOP_KIND | typeof CLUSTER_LOOP_KIND;
/** A ClusterLoop's finalizer is `kubeloop.dev/<name>`. */
export const FINALIZER_PREFIX = 'kubeloop.dev/';
/** A namespaced Loop's finalizer is `loop.kubeloop.dev/<name>` (only ever on objects of its own namespace). */
export const NAMESPACED_FINALIZER_PREFIX = 'loop.kubeloop.dev/';
/**
 * The router's finalizer on a Loop with `finalize: true`: the Loop is not gone until the router has removed the
 * Loop's finalizer from its primaries (docs/contract.md, finalizers). No Loop's finalizer can take this name.
 */
export const RELEASE_PRIMARIES_FINALIZER = 'router.kubeloop.dev/release-primaries';

/**
 * A loop's identity inside kubeloop (map keys, metrics label `loop`, logs, signing audience): `<namespace>/<name>`
 * for a namespaced Loop, `<name>` for a ClusterLoop. Namespace names hold no `/`, so the two never collide.
 */
export const loopIdentity = (namespace: string | undefined, name: string): string => (namespace ? `${namespace}/${name}` : name);

/** One key of one Secret (required namespace in a cluster-scoped object; a namespaced one's own when omitted). */
export interface SecretKeyRef {
  name: string;
  namespace: string;
  key: string;
}

export interface LoopSpec {
  for: KindRef;
  owns?: KindRef[];
  namespaces?: string[];
  selector?: V1LabelSelector;
  metadataOnly?: boolean;
  ignoreStatusChanges?: boolean;
  /** Where the function is (exactly one of `url` and `ref`), how it is called, and how calls are signed. */
  function: {
    url?: string;
    ref?: FunctionRef;
    timeoutSeconds?: number;
    maxConcurrency?: number;
    /**
     * Batched calls: on unless `enabled: false`; `maxSize` (default 16, at most 64) caps the requests per batch;
     * `windowMs` (default 0, 0-100) is how long a call waits for others to share its request.
     */
    batch?: { enabled?: boolean; maxSize?: number; windowMs?: number };
    /** A Secret key holding a Standard Webhooks secret (`whsec_…`): requests are signed, replies must be. */
    signingSecretRef?: SecretKeyRef;
    /** Base64 of PEM CA certificates trusted for an https `url` (as in admission webhooks' caBundle). */
    caBundle?: string;
    /** A second version that gets every request the live one gets; its answers are compared, never applied (docs/safe-changes.md). */
    shadow?: FunctionVersion;
    /** A second version that answers for a stable share of the keys, rolled back by itself when its error budget is spent. */
    canary?: CanaryFunction;
  };
  /**
   * The identity the router acts as for this Loop: every write and every read it forwards is made as this
   * ServiceAccount (impersonation), and the Loop receives only what it may list and watch. Required.
   */
  serviceAccount?: ServiceAccountRef;
  resyncPeriodSeconds?: number;
  /** Put the finalizer kubeloop.dev/<loop> on primaries and send their deletion with finalizing: true. */
  finalize?: boolean;
  /** Send deleted primaries (trigger DELETED, last known state) although no finalizer held them. */
  sendDeletes?: boolean;
  /**
   * Objects the function reads but does not own, sent in `request.related[<name>]`; a change of one calls
   * the primaries that refer to it (docs/contract.md, "Related objects").
   */
  related?: RelatedResource[];
}

/** Another version of a Loop's function: found, called and signed as spec.function is (exactly one of url and ref). */
export interface FunctionVersion {
  url?: string;
  ref?: FunctionRef;
  timeoutSeconds?: number;
  /** Calls in flight at once; a shadow's calls beyond it are dropped (and counted), never queued. */
  maxConcurrency?: number;
  signingSecretRef?: SecretKeyRef;
  caBundle?: string;
}

/** A canary: `weight` percent of the keys (by a stable hash of the object key) go to it. */
export interface CanaryFunction extends FunctionVersion {
  /** 0..100, the share of keys the canary answers for. */
  weight: number;
  /** Rolled back (every key to the stable version) when the canary's errors in the window pass either bound. */
  errorBudget: CanaryErrorBudget;
}

export interface CanaryErrorBudget {
  /** More than this many failed calls in the window spend the budget. */
  maxErrors?: number;
  /** A share of failed calls (0..1) above this, over at least 10 calls in the window, spends it. */
  ratio?: number;
  windowSeconds: number;
}

/**
 * One kind of related object and how its objects relate to one primary: by names read from a field of the
 * primary, by a label selector (fixed or read from the primary), or all objects of the namespace scope.
 */
export interface RelatedResource {
  /** The key in request.related; a DNS label. */
  name: string;
  apiVersion: string;
  kind: string;
  /**
   * Names read on the primary: exactly one of an annotation, a label, or a field path holding a string or
   * a list of strings (`spec.configMapName`, `spec.volumes[*].configMap.name`; docs/contract.md).
   */
  nameFrom?: { annotation?: string; label?: string; fieldPath?: string };
  /** A fixed label selector. */
  selector?: V1LabelSelector;
  /** A label selector from a field of the primary: a LabelSelector or a plain map of labels (a Service's spec.selector). */
  selectorFrom?: { fieldPath: string };
  /**
   * Where a namespaced kind is looked up: the primary's namespace when omitted (all namespaces for a
   * cluster-scoped primary), "*" for all namespaces, or a namespace name. Cluster-scoped kinds ignore it.
   */
  namespace?: string;
  /** Watch and send PartialObjectMetadata only. */
  metadataOnly?: boolean;
  /** Send (and cache) only these fields, besides apiVersion, kind and metadata. */
  fields?: string[];
}

export const KNATIVE_SERVING_API_VERSION = 'serving.knative.dev/v1';

/**
 * A function found by reference, resolved by the router and followed when it changes: a Service (`v1`,
 * the default; http://<name>.<namespace>.svc.<cluster domain>:<port><path>) or a Knative Service
 * (`serving.knative.dev/v1`; its status.address.url + path).
 */
export interface FunctionRef {
  apiVersion?: 'v1' | typeof KNATIVE_SERVING_API_VERSION;
  kind?: 'Service';
  name: string;
  namespace: string;
  /** The Service port to call; required for a Service, not allowed for a Knative Service. */
  port?: number;
  /** Appended to the resolved URL; default "/". */
  path?: string;
}

export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** A Loop's status conditions are plain metav1.Conditions, the same shape functions use. */
export type LoopCondition = Condition;

export interface LoopStatus {
  observedGeneration?: number;
  conditions?: LoopCondition[];
}

/** A Loop or a ClusterLoop: the router runs both alike, a Loop confined to metadata.namespace. */
export interface Loop {
  apiVersion: typeof LOOP_API_VERSION;
  kind: LoopKind;
  metadata: V1ObjectMeta;
  spec: LoopSpec;
  status?: LoopStatus;
}
