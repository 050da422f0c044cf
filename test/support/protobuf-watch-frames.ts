// Encodes watch frames and list pages as the API server writes them in protobuf (apimachinery's generated.proto field
// numbers), for the decoders' unit tests and benches; test/e2e/protobuf-{watch,list}.test.ts check them on a real server.
import { BinaryWriter } from '@bufbuild/protobuf/wire';

export interface MetaInput {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  /** Seconds since the epoch; 0: the zero time (an empty message). */
  creationSeconds?: number;
  deletionSeconds?: number;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean; blockOwnerDeletion?: boolean }>;
  finalizers?: string[];
  /** Bytes of managedFields to carry (one entry whose fieldsV1 holds them). */
  managedFieldsBytes?: number;
}

/** An ObjectMeta written as the Go code writes it: every string and the generation always, in field order. */
export function objectMeta(meta: MetaInput): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, 2).string(meta.name ?? '');
  w.tag(2, 2).string(meta.generateName ?? '');
  w.tag(3, 2).string(meta.namespace ?? '');
  w.tag(4, 2).string('');
  w.tag(5, 2).string(meta.uid ?? '');
  w.tag(6, 2).string(meta.resourceVersion ?? '');
  w.tag(7, 0).int64(meta.generation ?? 0);
  w.tag(8, 2).bytes(time(meta.creationSeconds ?? 0));
  if (meta.deletionSeconds !== undefined) w.tag(9, 2).bytes(time(meta.deletionSeconds));
  if (meta.deletionGracePeriodSeconds !== undefined) w.tag(10, 0).int64(meta.deletionGracePeriodSeconds);
  for (const [field, map] of [[11, meta.labels], [12, meta.annotations]] as const) {
    for (const key of Object.keys(map ?? {}).sort()) w.tag(field, 2).bytes(new BinaryWriter().tag(1, 2).string(key).tag(2, 2).string(map![key]!).finish());
  }
  for (const ref of meta.ownerReferences ?? []) {
    const r = new BinaryWriter().tag(1, 2).string(ref.kind).tag(3, 2).string(ref.name).tag(4, 2).string(ref.uid).tag(5, 2).string(ref.apiVersion);
    if (ref.controller !== undefined) r.tag(6, 0).bool(ref.controller);
    if (ref.blockOwnerDeletion !== undefined) r.tag(7, 0).bool(ref.blockOwnerDeletion);
    w.tag(13, 2).bytes(r.finish());
  }
  for (const finalizer of meta.finalizers ?? []) w.tag(14, 2).string(finalizer);
  if (meta.managedFieldsBytes) {
    const fields = new BinaryWriter().tag(1, 2).bytes(new Uint8Array(meta.managedFieldsBytes).fill(0x7b)).finish();
    w.tag(17, 2).bytes(new BinaryWriter().tag(1, 2).string('kubectl').tag(2, 2).string('Update').tag(7, 2).bytes(fields).finish());
  }
  return w.finish();
}

function time(seconds: number): Uint8Array {
  return seconds === 0 ? new Uint8Array(0) : new BinaryWriter().tag(1, 0).int64(seconds).finish();
}

/** `k8s\0` and the runtime.Unknown around a message of `kind`. */
export function enveloped(apiVersion: string, kind: string, message: Uint8Array, contentEncoding = ''): Uint8Array {
  const typeMeta = new BinaryWriter().tag(1, 2).string(apiVersion).tag(2, 2).string(kind).finish();
  const unknown = new BinaryWriter().tag(1, 2).bytes(typeMeta).tag(2, 2).bytes(message).tag(3, 2).string(contentEncoding).tag(4, 2).string('').finish();
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), unknown]);
}

export function partialObjectMetadata(meta: MetaInput): Uint8Array {
  return enveloped('meta.k8s.io/v1', 'PartialObjectMetadata', new BinaryWriter().tag(1, 2).bytes(objectMeta(meta)).finish());
}

/** A PartialObjectMetadataList page: ListMeta (shardInfo as Kubernetes 1.36+ echoes it), then each item's ObjectMeta. */
export function partialObjectMetadataList(list: { resourceVersion: string; continue?: string; remainingItemCount?: number; shardSelector?: string }, items: MetaInput[]): Uint8Array {
  const meta = new BinaryWriter().tag(1, 2).string('').tag(2, 2).string(list.resourceVersion).tag(3, 2).string(list.continue ?? '');
  if (list.remainingItemCount !== undefined) meta.tag(4, 0).int64(list.remainingItemCount);
  if (list.shardSelector !== undefined) meta.tag(5, 2).bytes(new BinaryWriter().tag(1, 2).string(list.shardSelector).finish());
  const message = new BinaryWriter().tag(1, 2).bytes(meta.finish());
  for (const item of items) message.tag(2, 2).bytes(new BinaryWriter().tag(1, 2).bytes(objectMeta(item)).finish());
  return enveloped('meta.k8s.io/v1', 'PartialObjectMetadataList', message.finish());
}

export function status(fields: { status: string; message: string; reason: string; code: number }): Uint8Array {
  const message = new BinaryWriter().tag(1, 2).bytes(new Uint8Array(0)).tag(2, 2).string(fields.status).tag(3, 2).string(fields.message).tag(4, 2).string(fields.reason).tag(6, 0).int32(fields.code).finish();
  return enveloped('v1', 'Status', message);
}

/** One frame: the 4-byte length, then the WatchEvent around the enveloped object. */
export function watchFrame(type: string, object: Uint8Array): Buffer {
  const event = new BinaryWriter().tag(1, 2).string(type).tag(2, 2).bytes(new BinaryWriter().tag(1, 2).bytes(object).finish()).finish();
  const header = Buffer.alloc(4);
  header.writeUInt32BE(event.length);
  return Buffer.concat([header, event]);
}
