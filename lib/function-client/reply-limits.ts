// What one function reply may cost the caller: bytes, JSON values and nesting per reply, and one budget of
// reply bytes in flight shared by every Loop (or hook), so concurrent large replies cannot add up to an OOM.
import { MAX_JSON_DEPTH } from '../contract/json-depth.ts';
import { DEFAULT_MAX_JSON_VALUES } from './json-value-budget.ts';

/** 16 MiB: far above any sane reply, far below what would hurt the router's memory. */
export const DEFAULT_MAX_REPLY_BYTES = 16 * 1024 * 1024;
/** 64 MiB of replies being read or parsed at once, across all functions: four full-size replies. */
export const DEFAULT_MAX_REPLY_BYTES_IN_FLIGHT = 64 * 1024 * 1024;

export interface ReplyLimits {
  maxBytes: number;
  maxValues: number;
  maxDepth: number;
}

export const DEFAULT_REPLY_LIMITS: ReplyLimits = { maxBytes: DEFAULT_MAX_REPLY_BYTES, maxValues: DEFAULT_MAX_JSON_VALUES, maxDepth: MAX_JSON_DEPTH };

/**
 * Bytes reserved by replies being read, up to a maximum. A chunk that does not fit is refused at once (the
 * call fails as Overloaded and is retried with backoff): waiting would hold sockets and memory while
 * whoever sends the large replies keeps the budget full.
 */
export class InFlightBytes {
  #used = 0;
  constructor(readonly max = DEFAULT_MAX_REPLY_BYTES_IN_FLIGHT) {}

  get used(): number {
    return this.#used;
  }

  tryReserve(bytes: number): boolean {
    if (this.#used + bytes > this.max) return false;
    this.#used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
  }
}
