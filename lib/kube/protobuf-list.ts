// A metadata-only list page in protobuf (as=PartialObjectMetadataList): the enveloped list (ListMeta 1, items 2,
// each a PartialObjectMetadata whose field 1 is its ObjectMeta) decoded to the page its JSON gives, each item's
// managedFields skipped by length (protobuf-object.ts), never decoded.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { delimited, MessageReader, readEnvelope, readObjectMetaField, varint } from './protobuf-object.ts';

/** A list's metadata as its JSON names its fields (`continue`, which client-node's model type calls `_continue`). */
export interface ListMeta {
  selfLink?: string;
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
  /** The shard selector the server applied (lib/kube/shard-selector.ts), Kubernetes 1.36+. */
  shardInfo?: { selector: string };
}

/** One item, `kind` and `apiVersion` first as in the JSON (the protobuf items carry none: the list's envelope names them). */
export interface MetadataItem {
  kind: string;
  apiVersion: string;
  metadata: V1ObjectMeta;
}

export interface MetadataListPage {
  kind: string;
  apiVersion: string;
  metadata: ListMeta;
  items: MetadataItem[];
}

/**
 * A list page's bytes as its JSON reads. `withItems: false` reads the list's metadata alone (the next page's token,
 * ahead of the page's parse), each item skipped by its length. Anything but a list whole is an error that says so.
 */
export function decodeMetadataList(bytes: Buffer, withItems = true): MetadataListPage {
  try {
    return readList(new MessageReader(bytes), bytes.length, withItems);
  } catch (error) {
    throw new Error(`protobuf list: ${bytes.length} bytes that are not a whole list: ${(error as Error).message}`, { cause: error });
  }
}

function readList(reader: MessageReader, length: number, withItems: boolean): MetadataListPage {
  const { apiVersion, kind, rawStart, rawEnd } = readEnvelope(reader, length);
  // A Status is an error's answer, never a 2xx one: the caller read it as such (KubeApiError) before.
  if (!kind.endsWith('List')) throw new Error(`a ${kind || 'message without a kind'}`);
  // PartialObjectMetadata; a server that ignored `as=` sent whole objects, whose field 1 is their ObjectMeta too.
  const itemKind = kind.slice(0, -'List'.length);
  reader.pos = rawStart;
  let metadata: ListMeta = {};
  const items: MetadataItem[] = [];
  while (reader.pos < rawEnd) {
    const tag = reader.uint32();
    if (tag === delimited(1)) metadata = readListMeta(reader, reader.end());
    else if (tag === delimited(2) && withItems) items.push({ kind: itemKind, apiVersion, metadata: readObjectMetaField(reader, reader.end()) });
    else reader.skipField(tag);
  }
  reader.ended(rawEnd);
  return { kind, apiVersion, metadata, items };
}

/** ListMeta as its JSON reads: empty strings left out, remainingItemCount whenever the server set it (0 included). */
function readListMeta(reader: MessageReader, end: number): ListMeta {
  let selfLink = '';
  let resourceVersion = '';
  let token = '';
  let remainingItemCount: number | undefined;
  let shardSelector: string | undefined;
  while (reader.pos < end) {
    const tag = reader.uint32();
    switch (tag) {
      case delimited(1): selfLink = reader.text(); break;
      case delimited(2): resourceVersion = reader.text(); break;
      case delimited(3): token = reader.text(); break;
      case varint(4): remainingItemCount = reader.int64Number(); break;
      case delimited(5): shardSelector = readShardSelector(reader, reader.end()); break;
      default: reader.skipField(tag);
    }
  }
  reader.ended(end);
  // In the JSON's order, whatever order the fields came in.
  const meta: ListMeta = {};
  if (selfLink !== '') meta.selfLink = selfLink;
  if (resourceVersion !== '') meta.resourceVersion = resourceVersion;
  if (token !== '') meta.continue = token;
  if (remainingItemCount !== undefined) meta.remainingItemCount = remainingItemCount;
  if (shardSelector !== undefined) meta.shardInfo = { selector: shardSelector };
  return meta;
}

/** ShardInfo's selector (its field 1). */
function readShardSelector(reader: MessageReader, end: number): string {
  let selector = '';
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === delimited(1)) selector = reader.text();
    else reader.skipField(tag);
  }
  reader.ended(end);
  return selector;
}
