// A Loop's runner started while its access review is asked: the watches' lists need no verdict, the first call
// and write do, so the runner queues nothing before the review allows it (LoopRunner.start's `allowed`). A Loop
// denied before is reviewed first and started only when allowed, so one that stays denied lists nothing per retry.
import type { AccessVerdict } from '../../lib/kube/access-review.ts';

export interface ReviewedStart {
  /** The Loop's access review (asked once the RBAC watch is, access-review-schedule.ts). */
  review(): Promise<AccessVerdict>;
  /** The runner's start: acquires and subscribes; queues nothing before `allowed` resolves. */
  start(allowed?: Promise<unknown>): Promise<void>;
  /** Stops the runner started for a Loop the review then refused. */
  stop(): Promise<void>;
  /** Start while reviewing (false: review, then start). */
  overlap: boolean;
}

/**
 * Reviews and starts; the review's outcome comes first, as if made before the start: a refusal is returned (the
 * runner stopped), a review that failed is thrown, and only then the start's own error.
 */
export async function startReviewed(o: ReviewedStart): Promise<AccessVerdict> {
  if (!o.overlap) {
    const verdict = await o.review();
    if (verdict.allowed) await o.start();
    return verdict;
  }
  let settle!: (allowed: boolean) => void;
  const allowed = new Promise<void>((resolve, reject) => (settle = (yes) => (yes ? resolve() : reject(new Error('the Loop\'s access review did not allow it')))));
  allowed.catch(() => {});
  const starting = o.start(allowed);
  // Its error is told after the review's outcome, not as an unhandled rejection meanwhile.
  starting.catch(() => {});
  // A start that failed stopped itself; one that succeeded is stopped here when the review refuses.
  const stopStarted = () => starting.then(() => o.stop(), () => {});
  let verdict: AccessVerdict;
  try {
    verdict = await o.review();
  } catch (error) {
    settle(false);
    await stopStarted();
    throw error;
  }
  settle(verdict.allowed);
  if (!verdict.allowed) {
    await stopStarted();
    return verdict;
  }
  await starting;
  return verdict;
}
