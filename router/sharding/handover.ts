// The handover rules of sharded routers as pure decisions: which keys a member may start while it moves
// from the view it adopted to the view it sees now, when it may acknowledge that view, and when adopt it.
import { MemberSet } from './member-set.ts';

export interface HandoverState {
  /** The view whose keys this member has taken over: every member of it had acknowledged it. */
  adopted: MemberSet;
  /** The live members as this member sees them now; it moves towards this view. */
  target: MemberSet;
}

/** A key in flight: which Loop, which primary, and its slot (what ownership is decided by). */
export interface LoopKey {
  loop: string;
  key: string;
  slot: number;
}

/** A member that could not renew its Lease, or has just started: it owns nothing until it adopts a view. */
export const NO_SHARE: HandoverState = { adopted: MemberSet.EMPTY, target: MemberSet.EMPTY };

/**
 * A key may start only if this member owns it both in the adopted view and in the target: a key it is
 * giving away stops at once, and a key it is gaining waits until the view is adopted.
 */
export function mayStart(state: HandoverState, me: string, slot: number): boolean {
  return state.adopted.owner(slot) === me && (state.target === state.adopted || state.target.owner(slot) === me);
}

/**
 * A member acknowledges its target once nothing it still runs belongs to someone else under it: from then
 * on it never starts such a key (mayStart), so the new owner may begin.
 */
export function canAcknowledge(state: HandoverState, me: string, inFlight: Iterable<LoopKey>): boolean {
  if (!state.target.has(me)) return false;
  for (const { slot } of inFlight) {
    if (state.target.owner(slot) !== me) return false;
  }
  return true;
}

/**
 * A member adopts its target once every member of the target acknowledged that same view. Members outside
 * the target have expired Leases, and a member that cannot renew stops itself before its Lease expires.
 */
export function canAdopt(target: MemberSet, me: string, acks: ReadonlyMap<string, string>): boolean {
  return target.has(me) && target.members.every((member) => acks.get(member) === target.id);
}

/** The slots whose keys may start after a change and could not before: the ones to enqueue from the cache. */
export function gained(before: HandoverState, after: HandoverState, me: string): (slot: number) => boolean {
  return (slot) => mayStart(after, me, slot) && !mayStart(before, me, slot);
}
