// The base URL a listening server answers on ("http://127.0.0.1:8080"), port 0 resolved to the port bound;
// shared by the fastify bootstrap and the node:http function server.
import type { Server } from 'node:net';

export function listeningUrl(server: Server): string {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server is not listening on a TCP port');
  const scheme = 'setSecureContext' in server ? 'https' : 'http';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  return `${scheme}://${shown}:${address.port}`;
}
