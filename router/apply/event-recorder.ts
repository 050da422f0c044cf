// Writes Kubernetes events (events.k8s.io/v1) about primaries, deduplicated and rate limited so a
// failing function cannot flood the API server (Metacontroller #249 asked for events at all).
import { randomBytes } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { TokenBucket } from '../../lib/kube/rate-limiter.ts';

export interface EventRecorderOptions {
  client: KubeClient;
  /** reportingController, e.g. kubeloop.dev/router. */
  controller: string;
  /** reportingInstance: the pod name. */
  instance: string;
  /** The same (object, type, reason, message) within this window is written once. */
  dedupWindowMs?: number;
  qps?: number;
  burst?: number;
  logger?: Logger;
}

export interface RecordedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** The verb the controller took (events.k8s.io "action"), e.g. Reconcile. */
  action?: string;
}

/** Decides whether an event is new enough to write; pure apart from the clock. */
export class EventDeduper {
  readonly #seen = new Map<string, number>();
  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  shouldWrite(key: string): boolean {
    const now = this.now();
    const last = this.#seen.get(key);
    if (last !== undefined && now - last < this.windowMs) return false;
    this.#seen.delete(key);
    this.#seen.set(key, now);
    if (this.#seen.size > this.maxEntries) {
      // Maps iterate in insertion order: the first key is the least recently written.
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
    return true;
  }
}

export class EventRecorder {
  readonly #deduper: EventDeduper;
  readonly #bucket: TokenBucket;
  constructor(private readonly options: EventRecorderOptions) {
    this.#deduper = new EventDeduper(options.dedupWindowMs ?? 5 * 60_000);
    this.#bucket = new TokenBucket({ qps: options.qps ?? 5, burst: options.burst ?? 25 });
  }

  /** Fire and forget: an event that cannot be written is logged, never fails the reconcile. */
  record(regarding: KubernetesObject, event: RecordedEvent): void {
    const uid = regarding.metadata?.uid ?? `${regarding.metadata?.namespace}/${regarding.metadata?.name}`;
    if (!this.#deduper.shouldWrite(`${uid}|${event.type}|${event.reason}|${event.message}`)) return;
    if (this.#bucket.tryTake() !== 0) {
      this.options.logger?.warn({ reason: event.reason }, 'event dropped by the event rate limit');
      return;
    }
    void this.#write(regarding, event).catch((error: unknown) => {
      this.options.logger?.warn({ err: error instanceof Error ? error.message : String(error), reason: event.reason }, 'could not write event');
    });
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
        eventTime: new Date().toISOString().replace(/(\.\d{3})Z$/, '$1000Z'),
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
