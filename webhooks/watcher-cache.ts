// The webhook's view of Watchers: an informer cache over watch.kubeloop.dev/v1alpha1 Watchers in all
// namespaces, so an admission never waits on an API call. Readiness waits for the first full list.
import type { Logger } from 'pino';
import { Informer, type KubeClient, type ResourceInfo } from '../lib/kube/index.ts';
import { WATCHER_API_VERSION, WATCHER_GROUP, WATCHER_KIND, WATCHER_PLURAL, WATCHER_VERSION, type Watcher } from '../api/watcher.ts';
import type { WatcherLookup } from './watcher.ts';

export const WATCHER_RESOURCE: ResourceInfo = {
  group: WATCHER_GROUP,
  version: WATCHER_VERSION,
  apiVersion: WATCHER_API_VERSION,
  kind: WATCHER_KIND,
  plural: WATCHER_PLURAL,
  namespaced: true,
};

export interface WatcherCache extends WatcherLookup {
  readonly synced: boolean;
  informer: Informer<Watcher>;
  stop(): Promise<void>;
}

/** Keeps only what injection reads: the ConfigMap data can be large and the webhook never uses it. */
function slim(watcher: Watcher): Watcher {
  const { managedFields: _managedFields, ...metadata } = watcher.metadata ?? {};
  const { configData: _configData, configBinaryData: _configBinaryData, ...spec } = watcher.spec ?? {};
  return { ...watcher, metadata, spec: spec as Watcher['spec'] };
}

export function startWatcherCache(client: KubeClient, logger?: Logger, namespace?: string): WatcherCache {
  const informer = new Informer<Watcher>({
    client,
    resource: WATCHER_RESOURCE,
    transform: slim,
    ...(namespace ? { namespace } : {}),
    ...(logger ? { logger } : {}),
  }).start();
  return {
    get: (ns, name) => informer.store.get(`${ns}/${name}`),
    get synced() {
      return informer.hasSynced;
    },
    informer,
    stop: () => informer.stop(),
  };
}
