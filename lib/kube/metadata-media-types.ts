// The Accept headers that ask the API server for PartialObjectMetadata (apiVersion, kind, metadata) instead of
// whole objects: JSON for a single object, protobuf first for a list (protobuf-list.ts) and a watch (protobuf-watch-stream.ts).

/** One object (a GET, or a write's reply) as PartialObjectMetadata, in JSON. */
export const METADATA_JSON_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** A list's items as PartialObjectMetadata, in JSON. */
export const METADATA_LIST_JSON_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/**
 * A list's items as PartialObjectMetadata, in protobuf where the server offers it (JSON else), as client-go's metadata
 * client asks: each item's managedFields (most of a pod's metadata bytes) are skipped by length, never parsed.
 */
export const METADATA_LIST_ACCEPT = `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,${METADATA_LIST_JSON_ACCEPT}`;

/** A watch's objects as PartialObjectMetadata, in protobuf where the server offers it, as for a list. */
export const METADATA_WATCH_ACCEPT = `application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,${METADATA_JSON_ACCEPT}`;
