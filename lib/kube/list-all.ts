// One complete, paged list of a resource (limit/continue), as the informer and `kubeloop diff` read it:
// a continue token that expires mid-list (410) restarts the list unpaged; every item gets apiVersion/kind.
// A metadata-only list is asked for in protobuf first (protobuf-list.ts), read in whichever encoding answered.
import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { isApiError, type KubeClient } from './kube-client.ts';
import { collectionPath, type ResourceInfo } from './resource-paths.ts';
import { listShardInfo } from './shard-selector.ts';
import { METADATA_LIST_ACCEPT } from './metadata-media-types.ts';
import { decodeMetadataList } from './protobuf-list.ts';
import { isProtobufMediaType } from './protobuf-watch-stream.ts';

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
 * The next page is asked for before this one is parsed (its token read from the page's head): the parse
 * overlaps the server's work on the next page, and at most one page is read ahead.
 */
export async function listAll<T extends KubernetesObject>(client: KubeClient, options: ListOptions, transform?: ListItemTransform<T>): Promise<{ items: T[]; resourceVersion: string; shardInfo?: string }> {
  const { resource, namespace, metadataOnly, signal } = options;
  const path = collectionPath(resource, namespace);
  const accept = metadataOnly ? METADATA_LIST_ACCEPT : 'application/json';
  let pageSize: number | undefined = options.pageSize ?? 500;
  const ask = (token: string | undefined): AskedPage => {
    const request = {
      path,
      accept,
      signal,
      query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, shardSelector: options.shardSelector, limit: pageSize, continue: token },
    };
    const body = metadataOnly ? client.requestBytes(request).then(({ bytes, contentType }) => (isProtobufMediaType(contentType) ? bytes : bytes.toString('utf8'))) : client.requestText(request);
    // A page read ahead may fail before it is awaited (or never be, when this page's parse throws): handled where awaited.
    body.catch(() => {});
    return { token, body };
  };
  let items: T[] = [];
  let resourceVersion = '';
  let shardInfo: string | undefined;
  let asked = ask(undefined);
  for (;;) {
    let body: PageBody;
    try {
      body = await asked.body;
    } catch (error) {
      if (asked.token !== undefined && isApiError(error, 410)) {
        // The continue token expired mid-list: start over with one unpaged list.
        items = [];
        pageSize = undefined;
        asked = ask(undefined);
        continue;
      }
      throw error;
    }
    const ahead = nextPageToken(body);
    const next = ahead === undefined ? undefined : ask(ahead);
    // One turn of the event loop first, so the next page's request leaves before the parse holds the thread.
    if (next) await new Promise((resolve) => setImmediate(resolve));
    const page = (typeof body === 'string' ? JSON.parse(body) : decodeMetadataList(body)) as KubernetesListObject<T>;
    for (const item of page.items ?? []) {
      item.apiVersion = resource.apiVersion;
      item.kind = resource.kind;
      items.push(transform ? transform(item) : item);
    }
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    // Every page must say so: a server that applied the selector to one page applies it to all.
    const pageShard = listShardInfo(page);
    shardInfo = asked.token === undefined ? pageShard : shardInfo === pageShard ? shardInfo : undefined;
    // The wire name is `continue`; client-node's model type calls it `_continue`, which JSON never has.
    const token = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
    if (token === undefined) return { items, resourceVersion, ...(shardInfo !== undefined ? { shardInfo } : {}) };
    asked = next?.token === token ? next : ask(token);
  }
}

/** A page's body: JSON text, or a metadata-only list in protobuf (protobuf-list.ts). */
type PageBody = string | Buffer;

/** A page asked for: the continue token it was asked with (undefined: the first) and its body to come. */
interface AskedPage {
  token: string | undefined;
  body: Promise<PageBody>;
}

/** The next page's token, read before the page is parsed: from a JSON page's head, or a protobuf page's ListMeta alone. */
export function nextPageToken(body: PageBody): string | undefined {
  return typeof body === 'string' ? continueFromHead(body) : decodeMetadataList(body, false).metadata.continue;
}

/**
 * A list page's continue token read from its head, before the whole page is parsed: the API server writes
 * kind, apiVersion and metadata before items. Undefined when the head does not show one (the last page, or
 * a body in another order: the token is then taken from the parsed page).
 */
export function continueFromHead(text: string): string | undefined {
  const at = text.indexOf('"items":');
  if (at < 1 || text[at - 1] !== ',') return undefined;
  try {
    const head = JSON.parse(`${text.slice(0, at - 1)}}`) as { metadata?: { continue?: unknown } } | null;
    const token = head?.metadata?.continue;
    return typeof token === 'string' && token !== '' ? token : undefined;
  } catch {
    return undefined;
  }
}
