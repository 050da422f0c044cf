// Whether a shadow version diverges from the live one, as the ShadowDiverged condition shows it: True with
// the latest diverging object as soon as one diverges, False again once the shadow has agreed on every
// call for `quietMs`. Pure (the caller passes the time); it says when the condition must be written, and
// rewrites the latest object at most every `refreshMs`, so a shadow that diverges on every call costs one
// status write per interval, not one per call.

export const SHADOW_DIVERGED = 'ShadowDiverged';

/** The condition to write: status, reason and message (the writer adds times and generations). */
export interface ShadowConditionChange {
  status: 'True' | 'False';
  reason: 'Diverged' | 'Agrees';
  message: string;
}

export interface DivergenceOptions {
  /** How long the shadow must agree on every call before the condition clears (default 5 minutes). */
  quietMs?: number;
  /** The least time between two writes naming a newer diverging object (default 10 s). */
  refreshMs?: number;
}

export class DivergenceTracker {
  readonly #quietMs: number;
  readonly #refreshMs: number;
  #diverged = false;
  #lastDivergenceAt = 0;
  #writtenAt = 0;
  #writtenSubject = '';
  #latest = '';

  constructor(options: DivergenceOptions = {}) {
    this.#quietMs = options.quietMs ?? 5 * 60_000;
    this.#refreshMs = options.refreshMs ?? 10_000;
  }

  get diverged(): boolean {
    return this.#diverged;
  }

  /** A call the shadow answered differently: `subject` names the object, `detail` the first differences. */
  divergedOn(subject: string, detail: string, nowMs: number): ShadowConditionChange | undefined {
    this.#lastDivergenceAt = nowMs;
    this.#latest = `${subject}: ${detail}`;
    const first = !this.#diverged;
    if (!first && (subject === this.#writtenSubject || nowMs - this.#writtenAt < this.#refreshMs)) return undefined;
    this.#diverged = true;
    this.#writtenAt = nowMs;
    this.#writtenSubject = subject;
    return { status: 'True', reason: 'Diverged', message: `the shadow's answer differs from the live one; latest: ${this.#latest}`.slice(0, 1024) };
  }

  /** A call both versions answered alike: clears the condition once none diverged for the quiet time. */
  agreed(nowMs: number): ShadowConditionChange | undefined {
    if (!this.#diverged || nowMs - this.#lastDivergenceAt < this.#quietMs) return undefined;
    this.#diverged = false;
    return { status: 'False', reason: 'Agrees', message: `the shadow agreed with the live version on every call for ${Math.round(this.#quietMs / 1000)} s; last divergence: ${this.#latest}`.slice(0, 1024) };
  }
}
