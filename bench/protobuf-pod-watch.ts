// The recorded metadata-only pod watch (recorded-pod-watch.ts) as the API server sends it in protobuf: one frame per
// event, managedFields carried at the size of their JSON, so the decoder skips what the JSON parse reads.
import { partialObjectMetadata, watchFrame, type MetaInput } from '../test/support/protobuf-watch-frames.ts';

export interface RecordedMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: MetaInput['ownerReferences'];
  managedFields?: unknown[];
}

/** One protobuf frame per JSON watch line of `lines` (PartialObjectMetadata objects and bookmarks). */
export function protobufWatchFrames(lines: readonly string[]): Buffer[] {
  return lines.map((line) => {
    const { type, object } = JSON.parse(line) as { type: string; object: { metadata: RecordedMeta } };
    return watchFrame(type, partialObjectMetadata(protobufMeta(object.metadata)));
  });
}

/** A recorded object's metadata as the protobuf encoder takes it: managedFields at the size of their JSON. */
export function protobufMeta({ creationTimestamp, managedFields, ...meta }: RecordedMeta): MetaInput {
  return { ...meta, creationSeconds: creationTimestamp ? Date.parse(creationTimestamp) / 1000 : 0, managedFieldsBytes: managedFields ? JSON.stringify(managedFields).length : 0 };
}
