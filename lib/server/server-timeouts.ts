// Request and connection timeouts every kubeloop HTTP server applies alike (the fastify bootstrap and the
// node:http server functions run), in a module of its own so neither loads the other's framework.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Defaults fit callers on the cluster network (the router, the API server): a healthy one sends a request in milliseconds. */
export interface ServerTimeouts {
  /** All headers must arrive within this time of the connection (or previous request); else 408 and close. */
  headersMs: number;
  /** The whole request, body included, within this time; a client trickling a body is answered 408 and closed. */
  requestMs: number;
  /** A connection with no traffic at all for this long is destroyed (idle keep-alive included). */
  idleMs: number;
  /** How long a kept-alive connection waits for its next request. */
  keepAliveMs: number;
}

export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, idleMs: 60_000, keepAliveMs: 35_000 };

/** The options http(s).createServer takes: Node enforces these while a request is still being received. */
export function nodeServerTimeouts(timeouts: ServerTimeouts): { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } {
  return {
    headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
    requestTimeout: timeouts.requestMs,
    // Node checks headersMs and requestMs on a timer (30 s by default); check often enough for the limits to bite.
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersMs / 4))),
  };
}

/**
 * Destroys a connection that sends no byte within `ms` (after the TLS handshake, for HTTPS). Node's own
 * timers miss it: headersTimeout starts with the first byte, and its connection checks keep refreshing
 * the socket's idle timer while requestTimeout is set.
 */
export function closeSilentConnections(server: Server, ms: number, https: boolean): void {
  const watch = (socket: Socket) => {
    // Compares byte counts instead of listening for 'data': a 'data' listener makes Node's HTTP server
    // stop parsing straight from the socket handle, which cost ~10% of a function's CPU per request.
    const before = socket.bytesRead;
    const timer = setTimeout(() => socket.bytesRead === before && socket.destroy(), ms);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
  server.on(https ? 'secureConnection' : 'connection', watch);
}
