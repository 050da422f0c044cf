// A Loop with `finalize: true` that goes away (deleted, or no longer finalizing) releases its primaries: the
// router removes the Loop's finalizer from every primary holding it, as the Loop's ServiceAccount, without
// calling the function (the controller is being removed, so there is no one left to clean up for; delete the
// primaries first to have them finalized). The router's own finalizer on the Loop keeps the Loop until that
// is done, also across a router restart. docs/contract.md#finalizers.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import { parseLoop, type LoopConfig } from '../base/loop-spec.ts';
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

export interface LoopFinalizerDeps {
  /** The router's own client: it writes its finalizer on the Loop. */
  client: KubeClient;
  logger: Logger;
  urlPolicy: FunctionUrlPolicy;
  /** Releases the primaries as the Loop's ServiceAccount (the launcher's). */
  release(config: LoopConfig): Promise<number>;
  /** A Warning event on the Loop. */
  warn(warning: { reason: string; message: string }): void;
}

/**
 * Carries loopFinalizerStep out for one Loop: adds the router's finalizer to a live finalizing Loop; when the
 * Loop goes (or stops finalizing) releases its primaries, then removes it. False: try again later (backoff).
 */
export async function settleLoopFinalizer(deps: LoopFinalizerDeps, at: { id: string; path: string; loop: Loop; known: LoopConfig | undefined }): Promise<boolean> {
  const { loop } = at;
  let config = at.known;
  try {
    config ??= parseLoop(loop, deps.urlPolicy);
  } catch {
    // A spec that does not parse names no ServiceAccount to release as: the Loop is not held for it.
  }
  const step = loopFinalizerStep(loop, config?.finalize === true);
  if (step === 'none') return true;
  try {
    if (step === 'add') {
      await writeLoopFinalizer(deps.client, at.path, loop, 'add');
      return true;
    }
    const released = config ? await deps.release(config) : 0;
    await writeLoopFinalizer(deps.client, at.path, loop, 'remove');
    deps.logger.info({ loop: at.id, released }, 'Loop gone or no longer finalizing: its finalizer removed from its primaries');
    return true;
  } catch (error) {
    const message = (error as Error).message;
    if (step !== 'release' || !releaseGivenUp(loop, Date.now())) {
      deps.logger.warn({ loop: at.id, step, err: message }, "could not update the Loop's finalizers; retrying");
      return false;
    }
    // Retried for minutes after the deletion: the Loop may go; the primaries still holding its finalizer say so.
    deps.warn({
      reason: 'ReleaseFailed',
      message: `could not remove ${config?.finalizer ?? "the Loop's finalizer"} from the Loop's primaries (${message}); remove it by hand: kubectl patch <kind> <name> --type=json -p '[{"op":"remove","path":"/metadata/finalizers/<index>"}]'`,
    });
    deps.logger.error({ loop: at.id, err: message }, "gave up releasing the Loop's primaries; the Loop goes");
    await writeLoopFinalizer(deps.client, at.path, loop, 'remove').catch(() => undefined);
    return true;
  }
}
