// The watch events a queued key collects until it is reconciled: which informer saw what (event type,
// object, resourceVersion, when). The queue coalesces keys; this keeps why, for the reconcile's trace and
// the flight recorder. Bounded: a few events per key, and only for keys waiting in the queue.
import type { KubeObject } from '../../lib/contract/types.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';

/** Which informer fired: the Loop's primary kind, an owned child, a related object, or the router itself. */
export type WatchSource = 'primary' | 'child' | 'related' | 'resync';

export interface WatchEvent {
  source: WatchSource;
  /** ADDED, MODIFIED, DELETED (watch event types), or RESYNC. */
  type: string;
  /** apiVersion/kind of the object the event is about. */
  kind: string;
  /** namespace/name of that object. */
  object: string;
  resourceVersion?: string;
  /** Wall clock, ms since the epoch. */
  at: number;
}

/** Events kept per key; a key that collects more (a storm of child updates) keeps the first and the latest. */
export const MAX_EVENTS_PER_KEY = 8;

export function watchEvent(source: WatchSource, type: string, object: KubeObject, at = Date.now()): WatchEvent {
  const resourceVersion = object.metadata?.resourceVersion;
  return {
    source,
    type,
    kind: `${object.apiVersion ?? ''}/${object.kind ?? ''}`,
    object: objectKey(object.metadata),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
    at,
  };
}

/** "primary MODIFIED example.com/v1/PodSet default/web rv=42": one event as a span attribute or a history line. */
export function describeWatchEvent(event: WatchEvent): string {
  const rv = event.resourceVersion === undefined ? '' : ` rv=${event.resourceVersion}`;
  return `${event.source} ${event.type} ${event.kind} ${event.object}${rv}`;
}

export class WatchEventLog {
  readonly #byKey = new Map<string, WatchEvent[]>();

  add(key: string, event: WatchEvent): void {
    const events = this.#byKey.get(key);
    if (!events) {
      this.#byKey.set(key, [event]);
      return;
    }
    // The first says what started the wait; the latest what the reconcile will see.
    if (events.length >= MAX_EVENTS_PER_KEY) events.splice(1, 1);
    events.push(event);
  }

  /** The key's events since it was last taken, oldest first; the log forgets them. */
  take(key: string): WatchEvent[] {
    const events = this.#byKey.get(key) ?? [];
    this.#byKey.delete(key);
    return events;
  }

  forget(key: string): void {
    this.#byKey.delete(key);
  }

  /** The key's one event since it was last taken, when it has exactly one (the log keeps it). */
  single(key: string): WatchEvent | undefined {
    const events = this.#byKey.get(key);
    return events?.length === 1 ? events[0] : undefined;
  }

  get size(): number {
    return this.#byKey.size;
  }
}
