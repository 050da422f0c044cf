// Writes Kubernetes events (events.k8s.io/v1) about primaries and Loops, deduplicated and rate limited per
// tenant so a failing or flooding function cannot flood the API server nor drown other tenants' events
// (event-budget.ts); the router's own warnings have a budget of their own. Metacontroller #249 asked for events at all.
import { randomBytes } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { DEFAULT_FUNCTION_EVENT_RATE, DEFAULT_ROUTER_EVENT_RATE, TenantEventBuckets, type EventRate } from './event-budget.ts';
import { microTime } from '../../lib/kube/meta-time.ts';

export interface EventRecorderOptions {
  client: KubeClient;
  /** reportingController, e.g. kubeloop.dev/router. */
  controller: string;
  /** reportingInstance: the pod name. */
  instance: string;
  /** The same (object, type, reason, message) within this window is written once. */
  dedupWindowMs?: number;
  /** The tenants' weights (the fair scheduler's); 1 each when omitted. */
  weightOf?: (tenant: string) => number;
  /** What functions' `event` actions may write, over all tenants. */
  functionRate?: EventRate;
  /** What the router's own warnings may write, over all tenants. */
  routerRate?: EventRate;
  /** Told of every event dropped by its tenant's bucket. */
  onDropped?: (tenant: string, source: EventSource) => void;
  logger?: Logger;
}

export interface RecordedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** The verb the controller took (events.k8s.io "action"), e.g. Reconcile. */
  action?: string;
}

/** `function`: an `event` action a function asked for; `router`: the router's own word about a Loop or a primary. */
export type EventSource = 'function' | 'router';

/** Whose budget an event takes: the Loop's tenant (tenantOf), and which kind of event it is. */
export interface EventOrigin {
  tenant: string;
  source: EventSource;
}

/**
 * Decides whether an event is new enough to write; pure apart from the clock. An event counts as written
 * only once its write succeeded: one dropped by the rate limit or refused by the API server is tried again
 * the next time it is recorded, not silenced for the window.
 */
export class EventDeduper {
  /** When each key was written; undefined while its write is in flight. */
  readonly #seen = new Map<string, number | undefined>();
  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when the event is to be written now: not written within the window, nor being written. */
  claim(key: string): boolean {
    if (this.#seen.has(key)) {
      const written = this.#seen.get(key);
      if (written === undefined || this.now() - written < this.windowMs) return false;
    }
    this.#seen.delete(key);
    this.#seen.set(key, undefined);
    if (this.#seen.size > this.maxEntries) {
      // Maps iterate in insertion order: the first key is the least recently claimed.
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined && oldest !== key) this.#seen.delete(oldest);
    }
    return true;
  }

  /** The claimed event was written: the same one is skipped for the window. */
  written(key: string): void {
    if (this.#seen.has(key)) this.#seen.set(key, this.now());
  }

  /** The claimed event was not written (dropped, or the write failed): the next record tries again. */
  release(key: string): void {
    if (this.#seen.has(key) && this.#seen.get(key) === undefined) this.#seen.delete(key);
  }
}

export class EventRecorder {
  readonly #deduper: EventDeduper;
  readonly #buckets: Record<EventSource, TenantEventBuckets>;
  readonly #drops = new Map<string, { since: number; count: number; logged: boolean }>();
  constructor(private readonly options: EventRecorderOptions) {
    this.#deduper = new EventDeduper(options.dedupWindowMs ?? 5 * 60_000);
    const weightOf = options.weightOf ?? (() => 1);
    this.#buckets = {
      function: new TenantEventBuckets(options.functionRate ?? DEFAULT_FUNCTION_EVENT_RATE, weightOf),
      router: new TenantEventBuckets(options.routerRate ?? DEFAULT_ROUTER_EVENT_RATE, weightOf),
    };
  }

  /** Fire and forget: an event that cannot be written is logged, never fails the reconcile. */
  record(regarding: KubernetesObject, event: RecordedEvent, origin: EventOrigin): void {
    const uid = regarding.metadata?.uid ?? `${regarding.metadata?.namespace}/${regarding.metadata?.name}`;
    const key = `${uid}|${event.type}|${event.reason}|${event.message}`;
    if (!this.#deduper.claim(key)) return;
    if (!this.#buckets[origin.source].tryTake(origin.tenant)) {
      this.#deduper.release(key);
      this.options.onDropped?.(origin.tenant, origin.source);
      this.#logDrop(origin, event.reason);
      return;
    }
    void this.#write(regarding, event).then(
      () => this.#deduper.written(key),
      (error: unknown) => {
        this.#deduper.release(key);
        this.options.logger?.warn({ err: error instanceof Error ? error.message : String(error), reason: event.reason }, 'could not write event');
      },
    );
  }

  /** A flood drops thousands of events: the log says so once a minute per tenant and source, with the count. */
  #logDrop(origin: EventOrigin, reason: string): void {
    const key = `${origin.source}|${origin.tenant}`;
    const drops = this.#drops.get(key) ?? { since: Date.now(), count: 0, logged: false };
    drops.count += 1;
    this.#drops.set(key, drops);
    if (drops.logged && Date.now() - drops.since < 60_000) return;
    this.options.logger?.warn({ reason, tenant: origin.tenant, source: origin.source, dropped: drops.count }, "events dropped: over their tenant's share of the event rate (counted in kubeloop_router_events_dropped_total)");
    this.#drops.set(key, { since: Date.now(), count: 0, logged: true });
    // Bounded: the tenants' keys are forgotten together when there are many.
    if (this.#drops.size > 10_000) this.#drops.clear();
  }

  async #write(regarding: KubernetesObject, event: RecordedEvent): Promise<void> {
    const namespace = regarding.metadata?.namespace ?? 'default';
    const name = `${regarding.metadata?.name ?? 'object'}.${randomBytes(8).toString('hex')}`;
    await this.options.client.request({
      method: 'POST',
      path: `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`,
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace },
        eventTime: microTime(new Date()),
        reportingController: this.options.controller,
        reportingInstance: this.options.instance,
        action: event.action ?? 'Reconcile',
        reason: event.reason,
        note: event.message.slice(0, 1024),
        type: event.type,
        regarding: {
          apiVersion: regarding.apiVersion,
          kind: regarding.kind,
          name: regarding.metadata?.name,
          namespace: regarding.metadata?.namespace,
          uid: regarding.metadata?.uid,
          resourceVersion: regarding.metadata?.resourceVersion,
        },
      },
    });
  }
}
