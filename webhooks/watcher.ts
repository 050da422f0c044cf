// The Watcher custom resource (watch.kubeloop.dev/v1alpha1) as the webhook reads it, and the
// annotations pods use to opt in and that the webhook leaves behind.
import type { V1Container, V1LocalObjectReference, V1ObjectMeta, V1Volume } from '@kubernetes/client-node';

export const WATCHER_GROUP = 'watch.kubeloop.dev';
export const WATCHER_VERSION = 'v1alpha1';
export const WATCHER_PLURAL = 'watchers';

/** On a pod: the name of the Watcher (same namespace) whose sidecar it wants. */
export const WATCHER_ANNOTATION = 'watch.kubeloop.dev/watcher';
/** Set by the webhook on pods it mutated; its presence makes re-invocation a no-op. */
export const INJECTED_ANNOTATION = 'watch.kubeloop.dev/injected';

export interface WatcherSpec {
  container: V1Container;
  volume?: V1Volume;
  configData?: Record<string, string>;
  configBinaryData?: Record<string, string>;
  /** The seed declares one LocalObjectReference; a list is accepted as well. */
  imagePullSecrets?: V1LocalObjectReference | V1LocalObjectReference[];
}

export interface WatcherStatus {
  configMapName?: string;
}

export interface Watcher {
  apiVersion?: string;
  kind?: string;
  metadata: V1ObjectMeta;
  spec: WatcherSpec;
  status?: WatcherStatus;
}

/** The ConfigMap the Watcher reconcile keeps: status.configMapName once set, `<watcher>-config` before. */
export function configMapNameOf(watcher: Watcher): string {
  return watcher.status?.configMapName || `${watcher.metadata.name ?? ''}-config`;
}

export function imagePullSecretsOf(watcher: Watcher): V1LocalObjectReference[] {
  const value = watcher.spec.imagePullSecrets;
  const list = Array.isArray(value) ? value : value ? [value] : [];
  return list.filter((ref) => typeof ref.name === 'string' && ref.name !== '');
}

/** Looks a Watcher up by namespace and name; backed by an informer cache in the webhook process. */
export interface WatcherLookup {
  get(namespace: string, name: string): Watcher | undefined;
}
