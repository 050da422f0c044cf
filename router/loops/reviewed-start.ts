// A Loop's runner started while its access review is asked: the watches' lists need no verdict, the first call
// and write do, so the runner queues nothing before the review allows it (LoopRunner.start's `allowed`). A Loop
// denied before is reviewed first and started only when allowed, so one that stays denied lists nothing per retry.
import type { AccessVerdict } from '../../lib/kube/access-review.ts';

export interface ReviewedStart {
  /** The Loop's access review (asked once the RBAC watch is, access-review-schedule.ts). */
  review(): Promise<AccessVerdict>;
  /** The runner's start: acquires and subscribes; queues nothing before `allowed` resolves. */
  start(allowed?: Promise<unknown>): Promise<void>;
  /**
   * Releases what the launch holds (the runner, its share of the tenant's API budget): called on every outcome but
   * a start the review allowed, whether the runner started or not. Safe to call more than once.
   */
  stop(): Promise<void>;
  /** Start while reviewing (false: review, then start). */
  overlap: boolean;
}

/**
 * Reviews and starts; the review's outcome comes first, as if made before the start: a refusal is returned (the
 * runner stopped), a review that failed is thrown, and only then the start's own error.
 */
export async function startReviewed(o: ReviewedStart): Promise<AccessVerdict> {
  let verdict: AccessVerdict | undefined;
  try {
    verdict = await (o.overlap ? reviewWhileStarting(o) : reviewThenStart(o));
    return verdict;
  } finally {
    // A Loop that does not run holds nothing: a refused Loop retried with backoff would otherwise keep a budget slot per retry.
    if (!verdict?.allowed) await o.stop();
  }
}

async function reviewThenStart(o: ReviewedStart): Promise<AccessVerdict> {
  const verdict = await o.review();
  if (verdict.allowed) await o.start();
  return verdict;
}

async function reviewWhileStarting(o: ReviewedStart): Promise<AccessVerdict> {
  let settle!: (allowed: boolean) => void;
  const allowed = new Promise<void>((resolve, reject) => (settle = (yes) => (yes ? resolve() : reject(new Error('the Loop\'s access review did not allow it')))));
  allowed.catch(() => {});
  const starting = o.start(allowed);
  // Its error is told after the review's outcome, not as an unhandled rejection meanwhile.
  starting.catch(() => {});
  // Settled before the outcome is told: the refused or failed launch is then released once (startReviewed).
  const startSettled = () => starting.then(() => {}, () => {});
  let verdict: AccessVerdict;
  try {
    verdict = await o.review();
  } catch (error) {
    settle(false);
    await startSettled();
    throw error;
  }
  settle(verdict.allowed);
  if (!verdict.allowed) {
    await startSettled();
    return verdict;
  }
  await starting;
  return verdict;
}
