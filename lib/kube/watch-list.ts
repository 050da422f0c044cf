// WatchList (KEP-3157) as client-go's reflector uses it: one watch streams the collection as ADDED events from
// the API server's watch cache and ends them with a bookmark, instead of a paged list and then a watch. The
// decisions the informer (informer.ts) takes on it, and the memory of an API server that refused it.
import type { KubernetesObject } from '@kubernetes/client-node';
import { isApiError, type KubeClient } from './kube-client.ts';

/** The annotation of the bookmark that ends the initial events: the state is complete at its resourceVersion. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** How an informer fills its cache: one WatchList request, or a paged list and then a watch. */
export type InitialRequest = 'watch-list' | 'list';

/**
 * The query of a WatchList. No resourceVersion: the server answers with a state as fresh as a consistent list's
 * (client-go asks the same after a 410). Bookmarks are required: the end of the initial events is one.
 */
export function watchListQuery(): { watch: true; sendInitialEvents: true; resourceVersionMatch: 'NotOlderThan'; allowWatchBookmarks: true } {
  return { watch: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true };
}

/**
 * WatchList unless it is turned off, this API server refused it, or the informer lists a share (KEP-5866: whether
 * the server applied the selector is read from the list's metadata, which a stream of events does not carry).
 */
export function initialRequest(options: { enabled: boolean; refused: boolean; sharded: boolean }): InitialRequest {
  return options.enabled && !options.refused && !options.sharded ? 'watch-list' : 'list';
}

/** Whether a watch event is the bookmark ending the initial events (other bookmarks only carry progress). */
export function isInitialEventsEnd(type: string, object: KubernetesObject | undefined): boolean {
  return type === 'BOOKMARK' && object?.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] === 'true';
}

/**
 * Whether opening a WatchList failed because this API server will not serve one: 400 or 422 naming the WatchList's
 * own parameters, as a server answers with the feature off ("sendInitialEvents is forbidden") or older than it
 * ("resourceVersionMatch is forbidden for watch"). Any other answer (a bad selector's 400, 403, 5xx, a network
 * error) would meet a list too: retried as it is, never taken for the server's refusal.
 */
export function refusesWatchList(error: unknown): boolean {
  return (isApiError(error, 400) || isApiError(error, 422)) && /sendInitialEvents|resourceVersionMatch/.test(error.message);
}

/**
 * A WatchList the server ended cleanly before the initial-events-end bookmark: ignored (a server or proxy that
 * took it for a plain watch, ended at its timeout without the bookmark) or ended early (a server shutting down:
 * asked again). `elapsedMs`: how long the stream was open; `timeoutSeconds`: what it asked the server for.
 */
export function endedBeforeItsEnd(elapsedMs: number, timeoutSeconds: number): 'ignored' | 'ended early' {
  return elapsedMs >= timeoutSeconds * 1000 ? 'ignored' : 'ended early';
}

/** The API server refused a WatchList, or ignored it (its stream ended without the initial-events-end bookmark). */
export class WatchListRefusedError extends Error {
  override name = 'WatchListRefusedError';
}

/** API servers (by KubeClient.serverKey) that refused a WatchList, with why: each informer on them lists instead. */
const refusedBy = new WeakMap<object, string>();

/** Why `client`'s API server refused a WatchList; undefined while it has not. */
export function watchListRefusal(client: Pick<KubeClient, 'serverKey'>): string | undefined {
  return refusedBy.get(client.serverKey);
}

/** Remembers that `client`'s API server refused a WatchList, for every client sharing its connections. */
export function rememberWatchListRefused(client: Pick<KubeClient, 'serverKey'>, why: string): void {
  refusedBy.set(client.serverKey, why);
}
