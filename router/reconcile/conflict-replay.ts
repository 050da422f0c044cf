// Keeps a function's answer whose writes conflicted, so the retry re-applies it instead of calling the
// function again when the primary moved only in resourceVersion/managedFields (a binding or status write
// a metadata-only Loop never sees). Any change the function could see drops it and the call is made.
import type { KubeObject, ReconcileResponse } from '../../lib/contract/types.ts';
import type { ApplyOutcome } from '../apply/apply-actions.ts';
import { answerCoversOwnWrite } from './own-writes.ts';
import { retestResourceVersion, testsOtherResourceVersion } from '../apply/patch-building.ts';
import { onlyBookkeepingChanged } from '../base/predicates.ts';

/** An answer kept after its writes conflicted: the primary exactly as it was sent, and the reply. */
export interface KeptAnswer {
  primary: KubeObject;
  response: ReconcileResponse;
  /** The call's round trip, reported again as the Loop's last call when the answer is re-applied. */
  callMs: number;
  /** When the function gave the answer (ms since the epoch): replays never stretch it past maxAgeMs. */
  answeredAt: number;
  /** Reconciles that found the cache still at the conflicting resourceVersion. */
  staleRetries: number;
  /**
   * Its patches were tested against what the function saw (a metadata-only Loop, apply/seen-metadata.ts), so
   * their conflict says that changed: a version that moved only in resourceVersion/managedFields is not the
   * change yet (the watch lags), waited past like the conflicting one, never replayed to.
   */
  seenChanged?: boolean;
}

export interface ReplayLimits {
  /** Retries (the backoff doubles from 10 ms: about 10 s in all) the cache gets to catch up before the function is called again. */
  maxStaleRetries: number;
  /** An answer older than this is never re-applied, however little the object changed. */
  maxAgeMs: number;
}

export const DEFAULT_REPLAY_LIMITS: ReplayLimits = { maxStaleRetries: 10, maxAgeMs: 30_000 };

/** What the next reconcile does with a kept answer. */
export type ReplayJudgement =
  /** Call the function as usual (nothing kept, or the object changed in a way the function sees). */
  | 'drop'
  /** The cache still holds the version that conflicted: back off and look again, without a call. */
  | 'wait'
  /** The object changed only in resourceVersion/managedFields: apply the same answer to it. */
  | 'replay';

/**
 * Judges a kept answer against the primary the cache holds now (undefined: deleted). Level-triggered like
 * the rest of the router: only an object the function would be sent unchanged (but for its
 * resourceVersion and managedFields) gets the old answer; anything else is a new input and a new call.
 */
export function judgeKeptAnswer(kept: KeptAnswer, cached: KubeObject | undefined, now: number, limits: ReplayLimits = DEFAULT_REPLAY_LIMITS): ReplayJudgement {
  if (cached === undefined || now - kept.answeredAt > limits.maxAgeMs) return 'drop';
  const bookkept = onlyBookkeepingChanged(kept.primary, cached);
  if (cached.metadata?.resourceVersion === kept.primary.metadata?.resourceVersion || (kept.seenChanged && bookkept)) {
    return kept.staleRetries < limits.maxStaleRetries ? 'wait' : 'drop';
  }
  return bookkept ? 'replay' : 'drop';
}

/**
 * Whether an applied answer is kept for a replay: its writes conflicted, and (as for own writes) it only
 * patched the primary and asked for nothing later, in a Loop without children or related objects (their state is input too).
 * A patch that tests a resourceVersion other than the one it was sent pins that version: never replayed; nor is an apply.
 */
export function keepsAnswer(
  loop: { owns: readonly unknown[]; related: readonly unknown[] },
  primary: KubeObject,
  response: ReconcileResponse,
  applied: ApplyOutcome,
  ctx: { deleted: boolean; finalizing: boolean },
): boolean {
  if (applied.result !== 'conflict' || !answerCoversOwnWrite(loop, primary, response, ctx)) return false;
  const sent = primary.metadata?.resourceVersion;
  // An apply is never replayed (as before applies counted as own writes): its object may pin a resourceVersion.
  return !response.actions.some((action) => action.op === 'apply' || (action.op === 'patch' && testsOtherResourceVersion(action.patch, sent)));
}

/** The answer with the resourceVersion tests its patches carry for `from` (as the SDK writes them) moved to `to`. */
export function retestAnswer(response: ReconcileResponse, from: KubeObject, to: KubeObject | undefined): ReconcileResponse {
  const [before, after] = [from.metadata?.resourceVersion, to?.metadata?.resourceVersion];
  const actions = response.actions.map((action) => (action.op === 'patch' ? { ...action, patch: retestResourceVersion(action.patch, before, after) } : action));
  return { ...response, actions };
}

/** Per key, the answer kept after a conflict; each reconcile of the key uses it up or waits on it. */
export class ConflictReplays {
  readonly #kept = new Map<string, KeptAnswer>();
  readonly #limits: ReplayLimits;

  constructor(limits: ReplayLimits = DEFAULT_REPLAY_LIMITS) {
    this.#limits = limits;
  }

  keep(key: string, answer: Omit<KeptAnswer, 'staleRetries'>): void {
    this.#kept.set(key, { ...answer, staleRetries: 0 });
  }

  /**
   * The kept answer to re-apply to `cached`, 'wait' while the cache has not caught up, or undefined (call
   * the function): the answer is used up unless the verdict is to wait.
   */
  take(key: string, cached: KubeObject | undefined, now = Date.now()): KeptAnswer | 'wait' | undefined {
    const kept = this.#kept.get(key);
    if (kept === undefined) return undefined;
    const judgement = judgeKeptAnswer(kept, cached, now, this.#limits);
    if (judgement === 'wait') {
      kept.staleRetries += 1;
      return 'wait';
    }
    this.#kept.delete(key);
    return judgement === 'replay' ? { ...kept, response: retestAnswer(kept.response, kept.primary, cached) } : undefined;
  }

  forget(key: string): void {
    this.#kept.delete(key);
  }

  get size(): number {
    return this.#kept.size;
  }
}
