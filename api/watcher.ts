// The Watcher custom resource (watchers.watch.kubeloop.dev/v1alpha1), field for field as in seed 003, and
// the pod annotations that opt in to its sidecar and that the injector leaves behind.
import type { V1Container, V1LocalObjectReference, V1Volume } from '@kubernetes/client-node';
import type { KubeObject } from './meta.ts';

export const WATCHER_GROUP = 'watch.kubeloop.dev';
export const WATCHER_VERSION = 'v1alpha1';
export const WATCHER_PLURAL = 'watchers';
export const WATCHER_API_VERSION = `${WATCHER_GROUP}/${WATCHER_VERSION}`;
export const WATCHER_KIND = 'Watcher';

/** On a pod: the name of the Watcher (same namespace) whose sidecar it wants. */
export const WATCHER_ANNOTATION = 'watch.kubeloop.dev/watcher';
/** Set on pods the sidecar was injected into; its presence makes re-invocation a no-op. */
export const INJECTED_ANNOTATION = 'watch.kubeloop.dev/injected';

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

/** The seed's naming for the managed ConfigMap: fmt.Sprintf("%s-config", watcher.Name). */
export function defaultConfigMapName(watcherName: string): string {
  return `${watcherName}-config`;
}

/** The ConfigMap a Watcher's sidecar reads: status.configMapName once the reconcile set it, the default before. */
export function configMapNameOf(watcher: Pick<Watcher, 'metadata' | 'status'>): string {
  return watcher.status?.configMapName || defaultConfigMapName(watcher.metadata?.name ?? '');
}

/** The seed declares one pull-secret reference; a list (as in a PodSpec) is accepted too. */
export function imagePullSecretsOf(watcher: Pick<Watcher, 'spec'>): V1LocalObjectReference[] {
  const value: unknown = watcher.spec?.imagePullSecrets;
  const list = (Array.isArray(value) ? value : value ? [value] : []) as V1LocalObjectReference[];
  return list.filter((ref) => typeof ref?.name === 'string' && ref.name !== '');
}
