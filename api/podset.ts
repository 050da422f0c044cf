// The PodSet custom resource (podsets.app.kubeloop.dev/v1alpha1), as charts/kubeloop/files/crds/ defines it.
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import type { Condition, KubeObject } from './meta.ts';

export const PODSET_API_VERSION = 'app.kubeloop.dev/v1alpha1';
export const PODSET_KIND = 'PodSet';
/** The replica range the seed's kubebuilder markers allow (Minimum=1, Maximum=10). */
export const MIN_REPLICAS = 1;
export const MAX_REPLICAS = 10;

export interface PodSetSpec {
  /** Desired number of available pods; the CRD defaults it to 1. */
  replicas?: number;
  /** Pod template; the seed's sleeping container when absent. */
  template?: V1PodTemplateSpec;
}

export interface PodSetStatus {
  /** Names of the available pods (Pending or Running, not terminating), sorted. */
  podNames: string[];
  availableReplicas: number;
  /** Set by the router from metadata.generation when it writes status. */
  observedGeneration?: number;
  conditions?: Condition[];
}

export type PodSet = KubeObject & { spec?: PodSetSpec; status?: PodSetStatus };
