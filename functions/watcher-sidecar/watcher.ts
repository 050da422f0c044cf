// The shape of Watcher injection works on, and the check that the Watcher the gateway sent as context has
// it. The Watcher type itself is api/watcher.ts.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { Watcher, WatcherSpec } from '../../api/watcher.ts';

/** A Watcher whose spec (and so container) injection can use; see admit.ts for the checks. */
export type InjectableWatcher = Watcher & { metadata: V1ObjectMeta; spec: WatcherSpec };

/** True when the Watcher carries a sidecar container with an image, the one thing injection needs. */
export function isInjectable(watcher: Watcher): watcher is InjectableWatcher {
  return typeof watcher.metadata === 'object' && typeof watcher.spec?.container?.image === 'string' && watcher.spec.container.image !== '';
}
