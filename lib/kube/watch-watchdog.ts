// How long a watch asks the server to keep it open, and its watchdog: a connection can die without either side
// noticing (Pepr #745), so a watch still open past its timeout plus grace is ended, and so, once its server has shown
// it sends bookmarks (the API server's watch cache sends one about every minute), is one that hears nothing too long.

/** The server-side timeout's base until the server has sent a bookmark (randomised up to twice this). */
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
/** Its base once it has: the API server's own default for a watch that names none (--min-request-timeout). */
export const DEFAULT_BOOKMARKED_WATCH_TIMEOUT_SECONDS = 1800;
/** Three of the API server's one-minute bookmarks missed. */
export const DEFAULT_WATCH_SILENCE_SECONDS = 180;
const DEFAULT_WATCHDOG_GRACE_MS = 30_000;

/** What a watch reads of the informer's options (InformerOptions, informer.ts, documents each). */
export interface WatchTimeouts {
  watchTimeoutSeconds?: number | undefined;
  bookmarkedWatchTimeoutSeconds?: number | undefined;
  watchSilenceMs?: number | undefined;
  watchdogGraceMs?: number | undefined;
}

/** Just these settings of a larger options object (the router's, say), to hand on to each informer. */
export function watchTimeoutsOf({ watchTimeoutSeconds, bookmarkedWatchTimeoutSeconds, watchSilenceMs, watchdogGraceMs }: WatchTimeouts): WatchTimeouts {
  return { watchTimeoutSeconds, bookmarkedWatchTimeoutSeconds, watchSilenceMs, watchdogGraceMs };
}

/**
 * The timeoutSeconds one watch asks for: its base in [t, 2t) so informers do not renew in step (`random` in [0, 1)).
 * `bookmarked`: the server has sent this informer a bookmark, so silence is counted and the watch may be long.
 * `fill`: a WatchList, long too: its initial-events-end bookmark is a bookmark, so the watch it goes on as counts
 * silence from there, and a server that ignores sendInitialEvents is caught by its fill deadline, not its timeout.
 */
export function watchTimeoutSeconds(timeouts: WatchTimeouts, bookmarked: boolean, fill: boolean, random: number): number {
  const base = bookmarked || fill ? (timeouts.bookmarkedWatchTimeoutSeconds ?? DEFAULT_BOOKMARKED_WATCH_TIMEOUT_SECONDS) : (timeouts.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS);
  return Math.floor(base * (1 + random));
}

/**
 * How long a WatchList may stream before its initial-events-end bookmark, in ms: the short timeout's [t, 2t), as
 * long as a server that took it for a plain watch (and so never sends that bookmark) had to end it in before.
 */
export function fillDeadlineMs(timeouts: WatchTimeouts, random: number): number {
  return Math.round((timeouts.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS) * (1 + random) * 1000);
}

/**
 * Ends one watch, through `end`, when it outlives its timeout plus grace or, once counting, stays silent too long;
 * and a WatchList, through the `late` it is given, when its initial state is not complete by its fill deadline.
 */
export class WatchWatchdog {
  readonly #silenceMs: number;
  readonly #end: (message: string) => void;
  readonly #deadline: NodeJS.Timeout;
  #silence: NodeJS.Timeout | undefined;
  #fill: NodeJS.Timeout | undefined;

  constructor(timeouts: WatchTimeouts, timeoutSeconds: number, end: (message: string) => void) {
    this.#silenceMs = timeouts.watchSilenceMs ?? DEFAULT_WATCH_SILENCE_SECONDS * 1000;
    this.#end = end;
    this.#deadline = setTimeout(() => end(`still open ${timeoutSeconds}s after its timeout`), timeoutSeconds * 1000 + (timeouts.watchdogGraceMs ?? DEFAULT_WATCHDOG_GRACE_MS));
  }

  /** The server sends bookmarks: from now on, hearing nothing for the silence limit ends the watch. */
  countSilence(): void {
    this.#silence ??= setTimeout(() => this.#end(`heard nothing for ${this.#silenceMs / 1000}s, bookmarks included`), this.#silenceMs);
  }

  /** Something arrived: the silence starts again (one timer moved, no new one). */
  heard(): void {
    this.#silence?.refresh();
  }

  /** A WatchList: `late` runs unless filled() is called within `deadlineMs` (fillDeadlineMs). */
  expectFill(deadlineMs: number, late: () => void): void {
    clearTimeout(this.#fill);
    this.#fill = setTimeout(late, deadlineMs);
  }

  /** The WatchList's initial-events-end bookmark arrived: its fill deadline no longer applies. */
  filled(): void {
    clearTimeout(this.#fill);
    this.#fill = undefined;
  }

  stop(): void {
    clearTimeout(this.#deadline);
    clearTimeout(this.#silence);
    clearTimeout(this.#fill);
  }
}
