// The Accept headers that ask the API server for PartialObjectMetadata (apiVersion, kind, metadata) instead of
// whole objects, in protobuf first where the reader takes it: a list (protobuf-list.ts), a watch
// (protobuf-watch-stream.ts) and a write's reply (kube-reply.ts metadataOf).

/** One object (a GET, or a write's reply) as PartialObjectMetadata, in JSON. */
export const METADATA_JSON_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** A list's items as PartialObjectMetadata, in JSON. */
export const METADATA_LIST_JSON_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';

/**
 * A list's items as PartialObjectMetadata, in protobuf where the server offers it (JSON else), as client-go's metadata
 * client asks: each item's managedFields (most of a pod's metadata bytes) are skipped by length, never parsed.
 */
export const METADATA_LIST_ACCEPT = `application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,${METADATA_LIST_JSON_ACCEPT}`;

/** One object (a watch's, or a write's reply) as PartialObjectMetadata, in protobuf where the server offers it, as for a list. */
export const METADATA_OBJECT_ACCEPT = `application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,${METADATA_JSON_ACCEPT}`;
