// Token bucket for requests to the API server (QPS + burst), like client-go's flowcontrol limiter.

export interface RateLimit {
  /** Sustained requests per second; 0 or Infinity disables limiting. */
  qps: number;
  /** Requests allowed at once after an idle period. */
  burst: number;
}

/** What a client waits on before each request: a TokenBucket, or a share of one (the router's tenant budget). */
export interface RequestLimiter {
  take(): Promise<void>;
}

export class TokenBucket implements RequestLimiter {
  #tokens: number;
  #last: number;
  #waiters: Array<() => void> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#tokens = limit.burst;
    this.#last = now();
  }

  get unlimited(): boolean {
    return !(this.limit.qps > 0) || this.limit.qps === Infinity;
  }

  /** Takes a token if one is available now; returns ms to wait otherwise. */
  tryTake(): number {
    if (this.unlimited) return 0;
    this.#refill();
    if (this.#tokens >= 1 && this.#waiters.length === 0) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.#tokens) / this.limit.qps) * 1000);
  }

  /** Resolves when a token was taken; callers are served first come, first served. */
  take(): Promise<void> {
    if (this.tryTake() === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      this.#schedule();
    });
  }

  #refill(): void {
    const now = this.now();
    const elapsed = (now - this.#last) / 1000;
    this.#last = now;
    this.#tokens = Math.min(this.limit.burst, this.#tokens + elapsed * this.limit.qps);
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#refill();
    const wait = Math.max(0, Math.ceil(((1 - this.#tokens) / this.limit.qps) * 1000));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#refill();
      while (this.#tokens >= 1 && this.#waiters.length > 0) {
        this.#tokens -= 1;
        this.#waiters.shift()?.();
      }
      if (this.#waiters.length > 0) this.#schedule();
    }, wait);
  }
}
