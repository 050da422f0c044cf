// How the webhook sees Watchers: a lookup by namespace and name (an informer cache in the process), and
// the narrower shape injection works on. The Watcher type itself is api/watcher.ts.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { Watcher, WatcherSpec } from '../api/watcher.ts';

/** A Watcher whose spec (and so container) injection can use; see admit-pod.ts for the checks. */
export type InjectableWatcher = Watcher & { metadata: V1ObjectMeta; spec: WatcherSpec };

/** Looks a Watcher up by namespace and name; backed by an informer cache in the webhook process. */
export interface WatcherLookup {
  get(namespace: string, name: string): Watcher | undefined;
}

/** True when the Watcher carries a sidecar container with an image, the one thing injection needs. */
export function isInjectable(watcher: Watcher): watcher is InjectableWatcher {
  return typeof watcher.metadata === 'object' && typeof watcher.spec?.container?.image === 'string' && watcher.spec.container.image !== '';
}
