// How a watch ends other than at its timeout, as the informer's list/watch loop (informer.ts) tells them apart:
// 410 Gone (relist), a silent connection (reconnect), a new share (list it), or an ERROR event's status.

/** The watch's resourceVersion is older than etcd's compaction window: only a list can go on. */
export class WatchGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WatchGoneError';
  }
}
/** The watch stayed open past its server-side timeout plus grace, or heard nothing too long (watch-watchdog.ts): the connection is dead. */
export class SilentWatchError extends Error {}
/** The informer's share changed: the watch ends so the new share is listed. */
export class ReshardError extends Error {}

/** The error a watch's ERROR event (a Status) stands for: WatchGoneError for 410 Gone / Expired. */
export function watchErrorEvent(informer: string, raw: unknown): Error {
  const status = raw as { code?: number; reason?: string; message?: string };
  if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') {
    return new WatchGoneError(`watch of ${informer}: ${status.message ?? 'resourceVersion too old'}`);
  }
  return new Error(`watch of ${informer}: error event ${status.code ?? ''} ${status.reason ?? ''}: ${status.message ?? ''}`);
}
