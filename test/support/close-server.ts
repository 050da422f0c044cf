// Closes a test's HTTP server for good: a router still calling it over keep-alive would otherwise hold server.close()
// open for as long as it calls (a connection busy at the moment of close() is never idle-closed afterwards).
import type { Server } from 'node:http';

/** Stops listening, then ends every connection, those in the middle of a request included. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}
