// The queue key of an object, "namespace/name" or "name" when cluster-scoped; kept free of pino so the
// portable function runtime (the Web fetch handler) can use it.
export function objectKey(metadata: { namespace?: string; name?: string } | undefined): string {
  const name = metadata?.name ?? '';
  return metadata?.namespace ? `${metadata.namespace}/${name}` : name;
}
