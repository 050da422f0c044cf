// The watch event of the router's own write (reconcile/own-writes.ts) settled before it takes a queue item, a worker,
// a trace and metric updates: at intake on a key the queue does not hold, or when the reconcile in flight ends; it
// leaves the same history entry (outcome own-write-seen) its reconcile would have, so `kubeloop why` is unchanged.
import type { KubeObject, Trigger } from '../../lib/contract/types.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import { watchEvent, type WatchEvent, type WatchEventLog } from '../base/watch-events.ts';
import type { FlightRecorder } from '../reconcile/flight-recorder.ts';
import type { OwnWrites } from '../reconcile/own-writes.ts';
import { finalizerPhase } from '../reconcile/reconcile-decision.ts';
import { recordSettledEvent } from '../reconcile/reconcile-trace.ts';

/** The outcome reconcile-key.ts gives the same event when it reaches the queue. */
export const OWN_WRITE_SEEN = 'own-write-seen';

/**
 * Pure: whether a primary's event may be settled at intake instead of queued. Only a MODIFIED (our patch or
 * apply changes an existing object), on a key the queue holds neither waiting nor in a reconcile (that
 * reconcile consumes the entry as before, with the events it coalesced), for a Loop whose function resolves
 * and whose reconcile would reach the own-write check (a finalizer to add, or a deleting primary, comes first).
 */
export function maySettleAtIntake(loop: Pick<LoopConfig, 'finalize' | 'finalizer' | 'sendDeletes'>, object: KubeObject, trigger: Trigger, facts: { queued: boolean; hasFunction: boolean }): boolean {
  if (trigger.type !== 'MODIFIED' || facts.queued || !facts.hasFunction) return false;
  const phase = finalizerPhase(loop, object, false);
  return phase.kind === 'call' && !phase.finalizing;
}

export interface OwnWriteIntake {
  loop: LoopConfig;
  ownWrites: OwnWrites;
  queue: { holds(key: string): boolean; forget(key: string): void };
  history: FlightRecorder | undefined;
  hasFunction: () => boolean;
  /** kubeloop_router_own_write_skips_total, as for a skip in the reconcile. */
  counted: () => void;
}

/**
 * True when the event was exactly the object our last covered write produced, and is settled here: the queue
 * forgets the key's failures (as the reconcile's `forget` step would) and the history records it. Either way a
 * consulted entry is used up, as in the reconcile: any later event for the key is a real change.
 */
export function settleOwnWrite(intake: OwnWriteIntake, key: string, object: KubeObject, trigger: Trigger, event?: WatchEvent): boolean {
  if (intake.ownWrites.size === 0) return false;
  if (!maySettleAtIntake(intake.loop, object, trigger, { queued: intake.queue.holds(key), hasFunction: intake.hasFunction() })) return false;
  if (!intake.ownWrites.consume(key, object.metadata?.resourceVersion)) return false;
  intake.counted();
  intake.queue.forget(key);
  recordSettledEvent(intake.history, intake.loop.id, key, event ?? watchEvent('primary', trigger.type, object), OWN_WRITE_SEEN);
  return true;
}

/**
 * The same for an event that arrived while the key's reconcile was in flight, before its PATCH's reply said which
 * version our write made: settled once that reconcile ends, when it is the key's one event since (a MODIFIED of the
 * primary) and the cache still holds that version (a status write since, and the key runs again as before). A
 * settled event leaves the log.
 */
export function settleWaitingOwnWrite(intake: OwnWriteIntake, key: string, trigger: Trigger, events: Pick<WatchEventLog, 'single' | 'forget'>, cached: KubeObject | undefined): boolean {
  const event = events.single(key);
  if (event?.source !== 'primary' || event.type !== 'MODIFIED' || trigger.type !== 'MODIFIED') return false;
  if (cached === undefined || cached.metadata?.resourceVersion !== event.resourceVersion) return false;
  // The history keeps the event as it arrived (its time), as the reconcile it replaces would have.
  if (!settleOwnWrite(intake, key, cached, trigger, event)) return false;
  events.forget(key);
  return true;
}
