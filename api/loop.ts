// The Loop resource (loops.kubeloop.dev/v1alpha1): binds a watched kind and the kinds it owns to a function.
// CRD: charts/kubeloop/crds/loops.kubeloop.dev.yaml. Validation into the router's config: router/loop-spec.ts.
import type { V1LabelSelector, V1ObjectMeta } from '@kubernetes/client-node';
import type { Condition, KindRef } from './meta.ts';

export const LOOP_API_VERSION = 'kubeloop.dev/v1alpha1';
export const LOOP_KIND = 'Loop';
export const FINALIZER_PREFIX = 'kubeloop.dev/';

/** One key of one Secret (a Loop is cluster-scoped, so the namespace is required). */
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
  function: {
    url: string;
    timeoutSeconds?: number;
    maxConcurrency?: number;
    /** A Secret key holding a Standard Webhooks secret (`whsec_…`): requests are signed, replies must be. */
    signingSecretRef?: SecretKeyRef;
    /** Base64 of PEM CA certificates trusted for an https `url` (as in admission webhooks' caBundle). */
    caBundle?: string;
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

export interface Loop {
  apiVersion: typeof LOOP_API_VERSION;
  kind: typeof LOOP_KIND;
  metadata: V1ObjectMeta;
  spec: LoopSpec;
  status?: LoopStatus;
}
