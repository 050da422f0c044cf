// A Loop with `finalize: true` that goes away (deleted, or no longer finalizing) releases its primaries: the
// router removes the Loop's finalizer from every primary holding it, as the Loop's ServiceAccount, without
// calling the function (the controller is being removed, so there is no one left to clean up for; delete the
// primaries first to have them finalized). The router's own finalizer on the Loop keeps the Loop until that
// is done, also across a router restart. docs/contract.md#finalizers.
import type { KubernetesObject } from '@kubernetes/client-node';
import { RELEASE_PRIMARIES_FINALIZER, type Loop } from '../../api/loop.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { isApiError } from '../../lib/kube/kube-client.ts';
import { listAll } from '../../lib/kube/list-all.ts';
import { objectPath, type ResourceInfo } from '../../lib/kube/resource-paths.ts';
import type { JsonPatchOperation } from '../../lib/contract/types.ts';
import { hasFinalizer, removeFinalizerPatch } from '../apply/patch-building.ts';

/** After this long since the Loop's deletion, a release that keeps failing is given up: the Loop goes, with a Warning. */
export const RELEASE_GIVE_UP_MS = 5 * 60_000;

/** What the router does with its finalizer on a Loop. */
export type LoopFinalizerStep = 'add' | 'release' | 'none';

/** Pure: add it to a live finalizing Loop; release the primaries (then drop it) when the Loop goes or stops finalizing. */
export function loopFinalizerStep(loop: Loop, finalize: boolean): LoopFinalizerStep {
  const held = hasFinalizer(loop, RELEASE_PRIMARIES_FINALIZER);
  const deleting = loop.metadata.deletionTimestamp !== undefined;
  if (held && (deleting || !finalize)) return 'release';
  if (!held && !deleting && finalize) return 'add';
  return 'none';
}

/** Pure: a failing release has been retried long enough once the Loop was deleted this long ago. */
export function releaseGivenUp(loop: Loop, now: number): boolean {
  const deleted = loop.metadata.deletionTimestamp;
  return deleted !== undefined && now - new Date(deleted).getTime() > RELEASE_GIVE_UP_MS;
}

/**
 * Removes `finalizer` from every primary holding it in `namespaces` (undefined: all), read metadata-only;
 * returns how many it released. A primary gone meanwhile is fine; any other failure throws (retried).
 */
export async function releasePrimaries(client: KubeClient, resource: ResourceInfo, namespaces: ReadonlySet<string> | undefined, finalizer: string): Promise<number> {
  let released = 0;
  for (const namespace of namespaces ? [...namespaces] : [undefined]) {
    const { items } = await listAll<KubernetesObject>(client, { resource, namespace, metadataOnly: true });
    for (const item of items) {
      const patch = removeFinalizerPatch(item, finalizer);
      if (!patch) continue;
      try {
        await client.request({ method: 'PATCH', path: objectPath(resource, item.metadata?.name ?? '', item.metadata?.namespace), contentType: 'application/json-patch+json', body: patch });
        released += 1;
      } catch (error) {
        if (!isApiError(error, 404)) throw error;
      }
    }
  }
  return released;
}

/**
 * Pure: the patch adding the router's finalizer, guarded by the finalizers as seen rather than the Loop's
 * resourceVersion, which every status write changes.
 */
export function addLoopFinalizerPatch(loop: Loop): JsonPatchOperation[] {
  const finalizers = loop.metadata.finalizers ?? [];
  if (finalizers.length === 0) return [{ op: 'add', path: '/metadata/finalizers', value: [RELEASE_PRIMARIES_FINALIZER] }];
  return [
    { op: 'test', path: '/metadata/finalizers', value: finalizers },
    { op: 'add', path: '/metadata/finalizers/-', value: RELEASE_PRIMARIES_FINALIZER },
  ];
}

/** Adds or removes the router's finalizer on the Loop (as the router), guarded against a concurrent edit. */
export async function writeLoopFinalizer(client: KubeClient, path: string, loop: Loop, step: 'add' | 'remove'): Promise<void> {
  const patch = step === 'add' ? addLoopFinalizerPatch(loop) : removeFinalizerPatch(loop, RELEASE_PRIMARIES_FINALIZER);
  if (!patch) return;
  try {
    await client.request({ method: 'PATCH', path, contentType: 'application/json-patch+json', body: patch });
  } catch (error) {
    // The Loop is gone: nothing left to hold.
    if (!isApiError(error, 404)) throw error;
  }
}
