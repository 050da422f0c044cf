// The Watcher custom resource (watch.kubeloop.dev/v1alpha1) as the webhook reads it, and the
// annotations pods use to opt in and that the webhook leaves behind.
import type { V1LocalObjectReference, V1ObjectMeta } from '@kubernetes/client-node';
import type { WatcherSpec, WatcherStatus } from '../functions/watcher/watcher-types.ts';

export type { WatcherSpec, WatcherStatus };

export const WATCHER_GROUP = 'watch.kubeloop.dev';
export const WATCHER_VERSION = 'v1alpha1';
export const WATCHER_PLURAL = 'watchers';

/** On a pod: the name of the Watcher (same namespace) whose sidecar it wants. */
export const WATCHER_ANNOTATION = 'watch.kubeloop.dev/watcher';
/** Set by the webhook on pods it mutated; its presence makes re-invocation a no-op. */
export const INJECTED_ANNOTATION = 'watch.kubeloop.dev/injected';

/** The Watcher as cached by the webhook; spec and status types are the Watcher function's (one definition). */
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

/** The seed declares one reference; a list (as in a PodSpec) is accepted too. */
export function imagePullSecretsOf(watcher: Watcher): V1LocalObjectReference[] {
  const value: unknown = watcher.spec.imagePullSecrets;
  const list = (Array.isArray(value) ? value : value ? [value] : []) as V1LocalObjectReference[];
  return list.filter((ref) => typeof ref?.name === 'string' && ref.name !== '');
}

/** Looks a Watcher up by namespace and name; backed by an informer cache in the webhook process. */
export interface WatcherLookup {
  get(namespace: string, name: string): Watcher | undefined;
}
