// Sending a JSON patch, and telling a stale write (the object changed since the function saw it) from an
// invalid patch, which the API server answers alike; a stale write is a conflict the key backs off from.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { JsonPatchOperation } from '../../lib/contract/types.ts';
import { AnswerError, isApiError, KubeApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { metadataOf } from '../../lib/kube/kube-reply.ts';
import { METADATA_OBJECT_ACCEPT } from '../../lib/kube/metadata-media-types.ts';
import { goJsonStringify } from '../../lib/kube/go-json.ts';
import { RV_PATH } from './patch-building.ts';
import { failedGuard } from './seen-metadata.ts';

const JSON_PATCH = 'application/json-patch+json';

/** The object changed since the function saw it: a JSON patch's test of its resourceVersion (or of what it saw) failed. */
export class StaleWriteError extends AnswerError {
  constructor(message: string) {
    super(message);
    this.name = 'StaleWriteError';
  }
}

/** A 409 (other than AlreadyExists) or a stale write. */
export function isConflict(error: unknown): boolean {
  if (error instanceof StaleWriteError) return true;
  return error instanceof KubeApiError && error.statusCode === 409 && error.reason !== 'AlreadyExists';
}

/** How a refused patch is told apart from an invalid one. */
export interface PatchGuards {
  /**
   * Tests of top-level metadata fields that hold while the object is as the function saw it (a metadata-only
   * Loop's primary: seen-metadata.ts); by default the patch's own resourceVersion tests.
   */
  guards?: readonly JsonPatchOperation[];
  /** The watch cache's version of the target, if it holds one. */
  cached?: () => Pick<KubernetesObject, 'metadata'> | undefined;
  headers?: Record<string, string>;
}

/**
 * Sends a JSON patch and returns the object's metadata as the server answered it: the reply is asked for as
 * PartialObjectMetadata in protobuf (JSON, or the full object, from a server or kind that cannot), as client-go's
 * metadata client does, since the write path reads only the resourceVersion it produced: the server encodes, and
 * the router reads, a pod's metadata without its managedFields instead of the whole pod parsed from JSON. The body is spelled
 * as Go spells strings (go-json.ts), so a test of a string holding "&" or "<" compares equal.
 * The API server answers a failed `test` with the same bare 422 Invalid as any other bad patch. A 422 is a
 * stale write when the watch cache already holds an object the guards fail (the usual case: the change that
 * beat us was watched before our answer came back); otherwise the live object's metadata is read once to
 * tell a stale write from an invalid patch.
 */
export async function sendJsonPatch(client: KubeClient, path: string, patch: JsonPatchOperation[], options: PatchGuards = {}): Promise<Pick<KubernetesObject, 'metadata'>> {
  const { headers } = options;
  try {
    return metadataOf(await client.requestBytes({ method: 'PATCH', path, contentType: JSON_PATCH, accept: METADATA_OBJECT_ACCEPT, body: goJsonStringify(patch), ...(headers ? { headers } : {}) }));
  } catch (error) {
    const guards = options.guards ?? patch.filter((op) => op.op === 'test' && op.path === RV_PATH);
    if (!isApiError(error, 422) || guards.length === 0) throw error;
    const cached = options.cached?.();
    if (cached) staleAgainst(path, guards, cached);
    const live = await client.requestBytes({ path: path.replace(/\/status$/, ''), accept: METADATA_OBJECT_ACCEPT }).then(metadataOf, () => undefined);
    if (live) staleAgainst(path, guards, live);
    throw error;
  }
}


/** Throws a StaleWriteError when `current` fails one of the guards. */
function staleAgainst(path: string, guards: readonly JsonPatchOperation[], current: Pick<KubernetesObject, 'metadata'>): void {
  const failed = failedGuard(guards, current);
  if (!failed) return;
  const seenVersion = guards.find((op) => op.path === RV_PATH) as { value?: unknown } | undefined;
  const versions = `resourceVersion ${seenVersion ? `${String(seenVersion.value)} -> ` : 'now '}${current.metadata?.resourceVersion}`;
  throw new StaleWriteError(`${path}: changed since it was read (${failed.path.slice('/metadata/'.length)}; ${versions})`);
}
