// Watches one object by namespace and name (an informer with a metadata.name field selector, so RBAC
// resourceNames can grant it) and reports each change of it, or its absence, to one callback.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Informer, type RestartReason } from './informer.ts';
import { isApiError, type KubeClient } from './kube-client.ts';
import type { ResourceInfo } from './resource-paths.ts';

export const SECRETS: ResourceInfo = { group: '', version: 'v1', apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true };

export interface NamedObjectWatchOptions<T extends KubernetesObject> {
  client: KubeClient;
  resource: ResourceInfo;
  namespace: string;
  name: string;
  /** Every add, update and delete of the object (undefined once deleted), after the first list too. */
  onChange: (object: T | undefined) => void;
  /** A list or watch refused with 403: the informer keeps retrying with backoff; this says it once per streak. */
  onForbidden?: (error: Error) => void;
  logger?: Logger;
}

export interface NamedObjectWatch<T extends KubernetesObject> {
  readonly informer: Informer<T>;
  /** The object as last seen; undefined before the first list or when it does not exist. */
  current(): T | undefined;
  stop(): Promise<void>;
}

export function watchNamedObject<T extends KubernetesObject>(options: NamedObjectWatchOptions<T>): NamedObjectWatch<T> {
  const { client, resource, namespace, name } = options;
  const informer = new Informer<T>({ client, resource, namespace, fieldSelector: `metadata.name=${name}`, ...(options.logger ? { logger: options.logger } : {}) });
  const key = resource.namespaced ? `${namespace}/${name}` : name;
  let forbidden = false;
  const report = (object: T | undefined) => {
    forbidden = false;
    options.onChange(object);
  };
  informer.on('add', report);
  informer.on('update', report);
  informer.on('delete', () => report(undefined));
  // Listed and absent: the callback learns so too.
  informer.on('synced', () => {
    if (!informer.store.get(key)) report(undefined);
  });
  informer.on('restart', (_reason: RestartReason, error?: Error) => {
    if (!error || !isApiError(error, 403) || forbidden) return;
    forbidden = true;
    options.onForbidden?.(error);
  });
  informer.start();
  return { informer, current: () => informer.store.get(key), stop: () => informer.stop() };
}
