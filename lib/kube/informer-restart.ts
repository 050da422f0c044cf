// What the informer's list/watch loop (informer.ts) does after its list or watch failed, decided from the error
// alone: end (its client is closed), list at once (a new share, a refused WatchList), or restart after a backoff.
import { isApiError, KubeClientClosedError } from './kube-client.ts';
import type { RestartReason } from './informer-cache.ts';
import { ReshardError, SilentWatchError, WatchGoneError } from './watch-errors.ts';
import { WatchListRefusedError } from './watch-list.ts';

export type AfterFailure =
  /** The KubeClient was closed: every later request fails at once too, so the loop ends (no restart event). */
  | { step: 'end' }
  /** The share changed: list it at once (the watch was ended for it). */
  | { step: 'list-share' }
  /** The API server will not serve a WatchList: list at once, and every informer on it from now on. */
  | { step: 'list-instead' }
  /**
   * A restart, told to the handlers with `reason`: `relist` (410 Gone: only a list can go on), after the next delay of
   * `backoff` (`expiries`: 410s in a row, `failures`: any other), unless `atOnce` (counted all the same).
   */
  | { step: 'restart'; reason: RestartReason; relist: boolean; backoff: 'expiries' | 'failures'; atOnce: boolean };

/**
 * `expiriesInARow`: 410s so far, each right after the relist of the one before. The first 410 relists at once; one
 * again before the watch after that relist brought anything waits (client-go backs off there too).
 */
export function afterFailure(error: Error, expiriesInARow: number): AfterFailure {
  if (error instanceof KubeClientClosedError) return { step: 'end' };
  if (error instanceof ReshardError) return { step: 'list-share' };
  if (error instanceof WatchListRefusedError) return { step: 'list-instead' };
  if (error instanceof WatchGoneError || isApiError(error, 410)) return { step: 'restart', reason: 'gone', relist: true, backoff: 'expiries', atOnce: expiriesInARow === 0 };
  return { step: 'restart', reason: error instanceof SilentWatchError ? 'silent' : 'error', relist: false, backoff: 'failures', atOnce: false };
}

/** Why waitForSync() rejects: stop() came first, or the informer ended because its KubeClient was closed. */
export function notSyncedError(informer: string, reason: unknown): Error {
  if (reason instanceof KubeClientClosedError) return new Error(`informer ${informer} stopped before it synced: its KubeClient was closed`, { cause: reason });
  return new Error(`informer ${informer} stopped before it synced`);
}
