// Sees every reconcile request on its way to a function (from the fault proxy) and reports when two
// reconciles of one key are in flight at once: the one-worker-per-key guarantee, checked from outside.

export interface ReconcileCall {
  loop: string;
  key: string;
  reconcileId: string;
  /** Which function proxy saw it. */
  via: string;
  startMs: number;
}

export interface ConcurrentReconcile {
  atMs: number;
  loop: string;
  key: string;
  reconcileIds: [string, string];
}

export class ReconcileTracker {
  readonly #inFlight = new Map<string, ReconcileCall[]>();
  readonly overlaps: ConcurrentReconcile[] = [];
  calls = 0;

  /** Records the start; returns the end callback (idempotent: a reply and a closed socket may both end it). */
  begin(call: ReconcileCall): () => void {
    this.calls += 1;
    const id = `${call.loop}\u0000${call.key}`;
    const running = this.#inFlight.get(id) ?? [];
    const other = running[0];
    if (other) this.overlaps.push({ atMs: call.startMs, loop: call.loop, key: call.key, reconcileIds: [other.reconcileId, call.reconcileId] });
    running.push(call);
    this.#inFlight.set(id, running);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.#inFlight.get(id) ?? []).filter((c) => c !== call);
      if (left.length === 0) this.#inFlight.delete(id);
      else this.#inFlight.set(id, left);
    };
  }

  get inFlight(): number {
    let n = 0;
    for (const calls of this.#inFlight.values()) n += calls.length;
    return n;
  }
}

/** loop, key and reconcileId of a ReconcileRequest body; undefined when it is not one. */
export function reconcileCallOf(body: string): { loop: string; key: string; reconcileId: string } | undefined {
  try {
    const request = JSON.parse(body) as { loop?: unknown; reconcileId?: unknown; object?: { metadata?: { namespace?: string; name?: string } } };
    const meta = request.object?.metadata;
    if (typeof request.loop !== 'string' || !meta?.name) return undefined;
    return {
      loop: request.loop,
      key: meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name,
      reconcileId: typeof request.reconcileId === 'string' ? request.reconcileId : '',
    };
  } catch {
    return undefined;
  }
}
