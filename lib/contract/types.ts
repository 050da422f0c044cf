// The kubeloop.dev/v1 wire contract between the router and reconcile functions (docs/contract.md).
import type { KubeObject } from '../../api/meta.ts';
import type { Operation } from 'fast-json-patch';

export const CONTRACT_API_VERSION = 'kubeloop.dev/v1';
export const CLOUDEVENT_TYPE = 'dev.kubeloop.reconcile.v1';
export const CLOUDEVENT_RESPONSE_TYPE = 'dev.kubeloop.reconcile.response.v1';

/** RELATED is sent only to Loops with spec.related or to functions that answered with requires. */
export type TriggerType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'RESYNC' | 'REQUEUE' | 'CHILD' | 'RELATED';

export type { KubeObject };

/** Identifies one object; namespace is omitted for cluster-scoped kinds. */
export interface ObjectTarget {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

export interface Trigger {
  /** A hint about why the function is called; never needed for correctness. */
  type: TriggerType;
  /** For CHILD triggers: the child that changed. */
  child?: ObjectTarget;
  /** For RELATED triggers: the related (or required) object that changed, appeared or went away, and its entry. */
  related?: { name: string; object: ObjectTarget };
}

export interface ReconcileRequest {
  apiVersion: typeof CONTRACT_API_VERSION;
  kind: 'ReconcileRequest';
  /** Name of the Loop that sent the request. */
  loop: string;
  /** The namespace of a namespaced Loop; absent for a ClusterLoop (docs/tenants.md). */
  loopNamespace?: string;
  /** Unique per call; functions log it so one reconcile can be followed end to end. */
  reconcileId?: string;
  trigger: Trigger;
  /** The primary object as the API server returned it. */
  object: KubeObject;
  /** One key per owned kind ("Pod.v1", "ConfigMap.v1", "Foo.example.com/v1"), [] when none. */
  children: Record<string, KubeObject[]>;
  /**
   * Related objects by entry name: one key per spec.related entry of the Loop, [] when none matches, and
   * one per `requires` entry the function asked for. Absent when the Loop has neither.
   */
  related?: Record<string, KubeObject[]>;
  /** True when the primary has a deletionTimestamp and carries the Loop's finalizer. */
  finalizing?: boolean;
  /** The router's clock, RFC 3339; functions never read their own clock. */
  now: string;
}

export type JsonPatchOperation = Operation;

export interface PatchAction {
  op: 'patch';
  target: ObjectTarget;
  /** RFC 6902 operations; should start with a test of /metadata/resourceVersion. */
  patch: JsonPatchOperation[];
}
export interface CreateAction {
  op: 'create';
  object: KubeObject;
}
export interface ApplyAction {
  op: 'apply';
  object: KubeObject;
}
export interface DeleteAction {
  op: 'delete';
  target: ObjectTarget;
  preconditions?: { uid?: string; resourceVersion?: string };
}
export interface StatusAction {
  op: 'status';
  /** The primary's whole .status; the router sets observedGeneration. */
  status: Record<string, unknown>;
}
export type EventType = 'Normal' | 'Warning';
export interface EventAction {
  op: 'event';
  type: EventType;
  reason: string;
  message: string;
}

export type Action = PatchAction | CreateAction | ApplyAction | DeleteAction | StatusAction | EventAction;
export type ActionOp = Action['op'];

export interface ReconcileError {
  /** temporary: retried with backoff; permanent: not retried until the object changes. */
  type: 'temporary' | 'permanent';
  message: string;
  retryAfterSeconds?: number;
}

/**
 * Objects a function needs and was not sent: the router reads them as the Loop's ServiceAccount, calls again
 * with them in request.related[name], and calls again whenever they change, until an answer stops asking.
 */
export interface RequiredResource {
  /** The key in request.related; a DNS label, not one of the Loop's spec.related names. */
  name: string;
  apiVersion: string;
  kind: string;
  /** For a namespaced kind; the primary's namespace when omitted. */
  namespace?: string;
  /** Exactly one of names and selector. */
  names?: string[];
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }> };
}

export interface ReconcileResponse {
  apiVersion: typeof CONTRACT_API_VERSION;
  kind: 'ReconcileResponse';
  actions: Action[];
  /** Objects to send on the next call (docs/contract.md, "Asking for objects"). */
  requires?: RequiredResource[];
  requeueAfterSeconds?: number;
  /** The Loop's finalizer may be removed. */
  finalized?: boolean;
  error?: ReconcileError;
}
