// Recognises the watch event the router's own patch or server-side apply of a primary caused, so the
// function is not called again for an object it has already answered for: controller-runtime's follow-up is a cache read, ours
// would be an HTTP round trip. Level-triggered: only an object exactly at the resourceVersion our write
// produced is skipped; any other change (another writer, kwok, a later event) gets a call as usual.
import type { Action, KubeObject, ObjectTarget, ReconcileResponse } from '../../lib/contract/types.ts';
import { refersTo } from '../../lib/kube/object-meta.ts';

/**
 * Whether the answer covers the object its own actions produce: it patched or applied only the primary (events
 * aside), asked for nothing later (no error, requeue, finalizing or requires), and the Loop sees no
 * children and no related objects, so the next request would differ from this one only by our patch (a
 * related change coalesced with our write's event in the queue must not be skipped with it). The contract asks functions to be
 * idempotent: given the result of its own patch or apply, a function answers with no further change.
 */
export function answerCoversOwnWrite(
  loop: { owns: readonly unknown[]; related: readonly unknown[] },
  primary: KubeObject,
  response: ReconcileResponse,
  ctx: { deleted: boolean; finalizing: boolean },
): boolean {
  if (loop.owns.length > 0 || loop.related.length > 0 || ctx.deleted || ctx.finalizing) return false;
  if (response.error || response.requeueAfterSeconds !== undefined || response.finalized || (response.requires?.length ?? 0) > 0) return false;
  let writes = 0;
  for (const action of response.actions) {
    if (action.op === 'event') continue;
    const target = writeTarget(action);
    if (!target || !targetsPrimary(target, primary)) return false;
    writes += 1;
  }
  return writes > 0;
}

/** What a patch or an apply writes; other writes (create, delete, status) are never covered. */
function writeTarget(action: Action): ObjectTarget | undefined {
  if (action.op === 'patch') return action.target;
  if (action.op !== 'apply') return undefined;
  const { apiVersion = '', kind = '', metadata } = action.object;
  return { apiVersion, kind, name: metadata?.name ?? '', ...(metadata?.namespace ? { namespace: metadata.namespace } : {}) };
}

/** A target without a namespace means the primary's (as the router applies it). */
function targetsPrimary(target: ObjectTarget, primary: KubeObject): boolean {
  return refersTo({ ...target, namespace: target.namespace ?? primary.metadata?.namespace }, primary);
}

/** Per key, the resourceVersion the router's last covered write produced; read once, then gone. */
export class OwnWrites {
  readonly #written = new Map<string, string>();

  remember(key: string, resourceVersion: string): void {
    this.#written.set(key, resourceVersion);
  }

  /**
   * True when the primary in the cache is exactly the object our write produced (then the call can be
   * skipped). Either way the entry is used up: a later event for the same key is always a real change.
   */
  consume(key: string, resourceVersion: string | undefined): boolean {
    const written = this.#written.get(key);
    if (written === undefined) return false;
    this.#written.delete(key);
    return resourceVersion !== undefined && written === resourceVersion;
  }

  forget(key: string): void {
    this.#written.delete(key);
  }

  get size(): number {
    return this.#written.size;
  }
}
