// One complete, paged list of a resource (limit/continue), as the informer and `kubeloop diff` read it:
// a continue token that expires mid-list (410) restarts the list unpaged; every item gets apiVersion/kind.
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { isApiError, type KubeClient } from './kube-client.ts';
import { collectionPath, type ResourceInfo } from './resource-paths.ts';
import { listShardInfo } from './shard-selector.ts';

export const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

export interface ListOptions {
  resource: ResourceInfo;
  /** One namespace; all when omitted. */
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Server-side sharded list (lib/kube/shard-selector.ts); servers without the feature ignore it. */
  shardSelector?: string | undefined;
  /** PartialObjectMetadata (apiVersion, kind, metadata) instead of whole objects. */
  metadataOnly?: boolean | undefined;
  pageSize?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** Applied to each item as its page arrives (after apiVersion/kind are set), e.g. to drop managedFields. */
export type ListItemTransform<T> = (item: T) => T;

/**
 * Every item of the collection (with apiVersion and kind set), the list's resourceVersion, and the shard
 * selector the server applied (metadata.shardInfo; undefined when it returned the whole collection).
 * `transform` runs page by page, so a long list never holds every item whole until its last page arrives.
 */
export async function listAll<T extends KubernetesObject>(client: KubeClient, options: ListOptions, transform?: ListItemTransform<T>): Promise<{ items: T[]; resourceVersion: string; shardInfo?: string }> {
  const { resource, namespace, metadataOnly, signal } = options;
  const path = collectionPath(resource, namespace);
  const accept = metadataOnly ? METADATA_LIST_ACCEPT : 'application/json';
  let items: T[] = [];
  let continueToken: string | undefined;
  let resourceVersion = '';
  let shardInfo: string | undefined;
  let pageSize: number | undefined = options.pageSize ?? 500;
  for (;;) {
    let page: KubernetesListObject<T>;
    try {
      page = await client.request<KubernetesListObject<T>>({
        path,
        accept,
        signal,
        query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, shardSelector: options.shardSelector, limit: pageSize, continue: continueToken },
      });
    } catch (error) {
      if (continueToken !== undefined && isApiError(error, 410)) {
        // The continue token expired mid-list: start over with one unpaged list.
        items = [];
        continueToken = undefined;
        pageSize = undefined;
        continue;
      }
      throw error;
    }
    for (const item of page.items ?? []) {
      item.apiVersion = resource.apiVersion;
      item.kind = resource.kind;
      items.push(transform ? transform(item) : item);
    }
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    // Every page must say so: a server that applied the selector to one page applies it to all.
    const pageShard = listShardInfo(page);
    shardInfo = continueToken === undefined ? pageShard : shardInfo === pageShard ? shardInfo : undefined;
    // The wire name is `continue`; client-node's model type calls it `_continue`, which JSON never has.
    continueToken = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
    if (continueToken === undefined) return { items, resourceVersion, ...(shardInfo !== undefined ? { shardInfo } : {}) };
  }
}
