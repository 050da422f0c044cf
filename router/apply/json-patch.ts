// Sending a JSON patch, and telling a stale write (the object changed since the function saw it) from an
// invalid patch, which the API server answers alike; a stale write is a conflict the key backs off from.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { JsonPatchOperation } from '../../lib/contract/types.ts';
import { AnswerError, isApiError, KubeApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { METADATA_WATCH_ACCEPT } from '../../lib/kube/informer.ts';

const JSON_PATCH = 'application/json-patch+json';

/** The object changed since the function saw it: a JSON patch's resourceVersion test failed. */
export class StaleWriteError extends AnswerError {
  constructor(message: string) {
    super(message);
    this.name = 'StaleWriteError';
  }
}

/** A 409 (other than AlreadyExists) or a failed resourceVersion test. */
export function isConflict(error: unknown): boolean {
  if (error instanceof StaleWriteError) return true;
  return error instanceof KubeApiError && error.statusCode === 409 && error.reason !== 'AlreadyExists';
}

/**
 * Sends a JSON patch and returns the object's metadata as the server answered it: the reply is asked for as
 * PartialObjectMetadata (the full object from a server that cannot), as controller-runtime's metadata client
 * does, since the write path reads only the resourceVersion it produced: the server encodes, and the router
 * reads, a pod's metadata instead of the whole pod (2.0 against 3.9 KB for a running pod).
 * The API server answers a failed `test` with the same bare 422 Invalid as any other
 * bad patch. When the patch tests the resourceVersion, a 422 is a stale write if the watch cache already
 * holds a newer version (the usual case: the change that beat us was watched before our answer came
 * back); otherwise the live object is read once to tell a stale write from an invalid patch.
 */
export async function sendJsonPatch(
  client: KubeClient,
  path: string,
  patch: JsonPatchOperation[],
  cachedResourceVersion: () => string | undefined = () => undefined,
  headers?: Record<string, string>,
): Promise<Pick<KubernetesObject, 'metadata'>> {
  try {
    return await client.request<KubernetesObject>({ method: 'PATCH', path, contentType: JSON_PATCH, accept: METADATA_WATCH_ACCEPT, body: patch, ...(headers ? { headers } : {}) });
  } catch (error) {
    const tested = patch.find((op) => op.op === 'test' && op.path === '/metadata/resourceVersion') as { value?: unknown } | undefined;
    if (!isApiError(error, 422) || !tested) throw error;
    const stale = (current: string | undefined) =>
      new StaleWriteError(`${path}: changed since it was read (resourceVersion ${String(tested.value)} -> ${current})`);
    const cached = cachedResourceVersion();
    if (cached !== undefined && cached !== tested.value) throw stale(cached);
    const live = await client.request<KubernetesObject>({ path: path.replace(/\/status$/, ''), accept: METADATA_WATCH_ACCEPT }).catch(() => undefined);
    if (live && live.metadata?.resourceVersion !== tested.value) throw stale(live.metadata?.resourceVersion);
    throw error;
  }
}
