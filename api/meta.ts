// Shapes every kubeloop API type builds on: an object as the API server returns it, and metav1.Condition.
// api/ imports nothing of ours, so that lib/, the deployables and tools can all import it.
import type { KubernetesObject } from '@kubernetes/client-node';

/** A Kubernetes object as the API server returned it (any kind). */
export type KubeObject = KubernetesObject & Record<string, unknown>;

/** metav1.Condition as it travels in JSON (times are RFC 3339 strings). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** Names a kind by apiVersion and Kind, as ownerReferences and Loops do. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}
