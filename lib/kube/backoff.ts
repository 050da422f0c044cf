// Exponential backoff with a cap and jitter, shared by watch restarts, function retries and the work queue.

export interface BackoffPolicy {
  /** Delay after the first failure. */
  baseMs: number;
  /** The delay never exceeds this. */
  maxMs: number;
  /** Growth per failure; 2 when omitted. */
  factor?: number;
  /** Fraction of the delay randomised (0..1), so many clients that failed together do not retry together. */
  jitter?: number;
}

/** The delay before retry number `attempt` (1 = first retry). `random` is injectable for tests. */
export function backoffDelay(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const factor = policy.factor ?? 2;
  const exponent = Math.max(0, attempt - 1);
  // Cap the exponent first so huge attempt counts cannot overflow to Infinity/NaN.
  const raw = policy.baseMs * Math.pow(factor, Math.min(exponent, 64));
  const capped = Math.min(policy.maxMs, raw);
  const jitter = Math.min(1, Math.max(0, policy.jitter ?? 0));
  return Math.round(capped * (1 - jitter * random()));
}

/** Counts consecutive failures of one thing (a watch, a function) and hands out the next delay. */
export class Backoff {
  #attempts = 0;
  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  get attempts(): number {
    return this.#attempts;
  }

  next(): number {
    this.#attempts += 1;
    return backoffDelay(this.policy, this.#attempts, this.random);
  }

  reset(): void {
    this.#attempts = 0;
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
