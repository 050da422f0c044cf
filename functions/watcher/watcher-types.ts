// The Watcher custom resource (watchers.watch.kubeloop.dev/v1alpha1), field for field as in seed 003.
import type { V1Container, V1LocalObjectReference, V1Volume } from '@kubernetes/client-node';
import type { KubeObject } from '../../lib/sdk/index.ts';

export const WATCHER_API_VERSION = 'watch.kubeloop.dev/v1alpha1';
export const WATCHER_KIND = 'Watcher';

export interface WatcherSpec {
  /** The sidecar container the webhook injects; the only required field. */
  container: V1Container;
  /** A volume added to the pod along with the sidecar. */
  volume?: V1Volume;
  /** Data of the managed ConfigMap. */
  configData?: Record<string, string>;
  /** Binary data of the managed ConfigMap, base64 in JSON (Go's map[string][]byte). */
  configBinaryData?: Record<string, string>;
  /** A single reference, as in the seed (a PodSpec has a list). */
  imagePullSecrets?: V1LocalObjectReference;
}

export interface WatcherStatus {
  /** Name of the ConfigMap this Watcher manages. */
  configMapName?: string;
  observedGeneration?: number;
}

export type Watcher = KubeObject & { spec?: WatcherSpec; status?: WatcherStatus };

/** The seed's naming: fmt.Sprintf("%s-config", watcher.Name). */
export function configMapNameOf(watcherName: string): string {
  return `${watcherName}-config`;
}
