// The per-object flight recorder: for each primary, the last N reconciles (what triggered them, what the
// function was asked and answered, what each write did, how long each part took, the trace id). Memory is
// bounded three times: N entries per object, objects per tenant and objects in all. A tenant's objects evict
// its own least recently reconciled first, so one team's burst never erases another team's history.
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { tenantOfLoopId } from '../base/tenant-weights.ts';
import type { WatchEvent } from '../base/watch-events.ts';
import { TenantSizes } from './tenant-sizes.ts';

export interface WriteRecord {
  /** "create v1/Pod default/web-7x2k": the action as the function asked for it. */
  action: string;
  /** applied, exists, skipped, notfound, refused, conflict, error. */
  result: string;
  /** The API server's status code when a write failed. */
  status?: number;
  message?: string;
  ms: number;
}

export interface ReconcileRecord {
  /** RFC 3339, when the reconcile left the queue. */
  startedAt: string;
  reconcileId?: string;
  /** Recorded (sampled) traces only. */
  traceId?: string;
  /** The watch events coalesced into this reconcile, oldest first; REQUEUE when only the router requeued it. */
  triggers: WatchEvent[];
  /** sha256 (first 16 hex digits) over what the function was shown: primary and children resourceVersions, trigger. */
  requestDigest?: string;
  /** The answer's actions, one line each (the first MAX_RECORDED_LINES). */
  actions: string[];
  /** Each write's result (the first MAX_RECORDED_LINES). */
  writes: WriteRecord[];
  /** Actions and writes left out beyond MAX_RECORDED_LINES: a reply of 1,000 actions is summarized, not kept. */
  omitted?: { actions: number; writes: number };
  /** ok, conflict, throttled, function-error, action-error, ..., or the stage that ended it early. */
  outcome: string;
  /** A kept answer re-applied after a conflict, without calling the function. */
  replayed?: boolean;
  /** The call's result when it did not answer: Timeout, ServerError, HTTP 4xx ... */
  callError?: string;
  durations: { queueMs: number; callMs?: number; applyMs?: number; totalMs: number };
  /**
   * The request the function was sent, on the object's latest entry only (a fixture for `kubeloop replay
   * --history`). A reference to what the call sent, mostly the informers' own objects: no copy is made.
   */
  request?: ReconcileRequest;
}

/** Lines of actions and of writes one entry keeps; the memory bound is entries x this. */
export const MAX_RECORDED_LINES = 20;

export interface FlightRecorderLimits {
  /** Reconciles kept per object; 0 turns the recorder off. */
  perObject: number;
  /** Objects kept in all. */
  objects: number;
  /** Objects kept for one tenant (a Loop's namespace; all ClusterLoops are one); `objects` when not given. */
  objectsPerTenant?: number;
}

/** Half the total per tenant: one tenant alone keeps 500 objects, and two busy tenants can never push each other below that. */
export const DEFAULT_HISTORY_LIMITS = { perObject: 10, objects: 1000, objectsPerTenant: 500 } satisfies Required<FlightRecorderLimits>;

/** Where finished entries go besides memory (the rotated history files); must neither wait nor throw. */
export interface HistorySink {
  offer(loop: string, key: string, entry: ReconcileRecord): void;
}

export class FlightRecorder {
  // Per tenant, then per object. Map iteration order is insertion order: re-inserting on every record makes
  // the first entry of a tenant's map its least recently reconciled object.
  readonly #byTenant = new Map<string, Map<string, ReconcileRecord[]>>();
  /** Each tenant's size in #byTenant, for the eviction past the total bound (tenant-sizes.ts). */
  readonly #sizes = new TenantSizes();
  #objects = 0;
  readonly #limits: FlightRecorderLimits;
  readonly #sink: HistorySink | undefined;

  constructor(limits: FlightRecorderLimits = DEFAULT_HISTORY_LIMITS, sink?: HistorySink) {
    this.#limits = limits;
    this.#sink = sink;
  }

  get enabled(): boolean {
    return this.#limits.perObject > 0;
  }

  record(loop: string, key: string, entry: ReconcileRecord): void {
    if (!this.enabled) return;
    this.#sink?.offer(loop, key, entry);
    const tenant = tenantOfLoopId(loop);
    const objects = this.#byTenant.get(tenant) ?? new Map<string, ReconcileRecord[]>();
    this.#byTenant.set(tenant, objects);
    const id = historyId(loop, key);
    const entries = objects.get(id) ?? [];
    if (objects.delete(id)) this.#objects -= 1;
    // Only the latest request is kept (older ones would pin objects the informers have replaced); an entry
    // without a call (its own write seen, a replay) leaves the last one in place.
    if (entry.request) for (const older of entries) delete older.request;
    entries.push(entry);
    if (entries.length > this.#limits.perObject) entries.splice(0, entries.length - this.#limits.perObject);
    objects.set(id, entries);
    this.#objects += 1;
    this.#sizes.set(tenant, objects.size);
    while (objects.size > (this.#limits.objectsPerTenant ?? this.#limits.objects)) this.#evictOldest(tenant);
    while (this.#objects > this.#limits.objects) {
      const victim = this.#sizes.largest(tenant);
      if (victim === undefined) break;
      this.#evictOldest(victim);
    }
  }

  /** The object's reconciles, oldest first (empty when none is kept). */
  history(loop: string, key: string): readonly ReconcileRecord[] {
    return this.#byTenant.get(tenantOfLoopId(loop))?.get(historyId(loop, key)) ?? [];
  }

  /** A deleted primary's history stays until it ages out: "why was it deleted" is a question too. */
  get objects(): number {
    return this.#objects;
  }

  #evictOldest(tenant: string): void {
    const objects = this.#byTenant.get(tenant);
    const oldest = objects?.keys().next().value;
    if (!objects || oldest === undefined) return;
    objects.delete(oldest);
    this.#objects -= 1;
    this.#sizes.set(tenant, objects.size);
    if (objects.size === 0) this.#byTenant.delete(tenant);
  }
}

function historyId(loop: string, key: string): string {
  return `${loop}\u0000${key}`;
}
