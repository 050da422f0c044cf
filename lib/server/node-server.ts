// A node:http server that behaves as the fastify bootstrap's does without loading a framework: the same
// timeouts, parser-error answers, 503 to requests arriving while it closes, and a drain on close. The function
// images' server (lib/runtime/node-function-server.ts) and the router's ops server (ops-server.ts) stand on it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../observability/logger.ts';
import { answerClientError } from './client-errors.ts';
import { listeningUrl } from './listening-url.ts';
import { closeSilentConnections, DEFAULT_SERVER_TIMEOUTS, nodeServerTimeouts, type ServerTimeouts } from './server-timeouts.ts';

export interface NodeServer {
  server: Server;
  log: Logger;
  /** True once shutdown has begun; /readyz then answers 503 so load balancers stop sending traffic. */
  isClosing(): boolean;
  beginClosing(): void;
  /** Stops accepting, answers requests on kept-alive connections 503, resolves once in-flight requests finished. */
  close(): Promise<void>;
}

/** A reply complete in memory, as the runtime's cores and the ops routes make it. */
export interface NodeReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What fastify answers a request arriving while it closes (its return503OnClosing), the connection then closed. */
const CLOSING_BODY = '{"error":"Service Unavailable","message":"Service Unavailable","statusCode":503}';

/** `listener` serves requests until close(); `isClosing` is handed to it through the returned server. */
export function createNodeServer(listener: (request: IncomingMessage, response: ServerResponse) => void, options: { log: Logger; timeouts?: Partial<ServerTimeouts> }): NodeServer {
  const timeouts = { ...DEFAULT_SERVER_TIMEOUTS, ...options.timeouts };
  let closing = false;
  let closed = false;
  const server = createServer(nodeServerTimeouts(timeouts), (request, response) => {
    if (!closed) return listener(request, response);
    response.writeHead(503, { 'content-type': 'application/json', 'content-length': CLOSING_BODY.length, connection: 'close' }).end(CLOSING_BODY);
  });
  // As fastify sets them on its server: connectionTimeout, keepAliveTimeout, requestTimeout.
  server.setTimeout(timeouts.idleMs);
  server.keepAliveTimeout = timeouts.keepAliveMs;
  server.requestTimeout = timeouts.requestMs;
  server.on('clientError', answerClientError(options.log));
  closeSilentConnections(server, timeouts.headersMs, false);
  return {
    server,
    log: options.log,
    isClosing: () => closing,
    beginClosing: () => {
      closing = true;
    },
    close: () => {
      closing = true;
      closed = true;
      // server.close() also closes idle kept-alive connections; it calls back once the busy ones ended.
      return new Promise<void>((resolve, reject) => server.close((error) => (error && (error as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(error) : resolve())));
    },
  };
}

/**
 * Writes a complete reply: its length declared, as fastify does, rather than sent chunked. All headers go to
 * writeHead in one object, content-length first as before: with no setHeader call first, Node writes them as
 * they are instead of copying each into its header map (~0.6 KB less garbage per function request).
 */
export function sendReply(response: ServerResponse, reply: NodeReply): void {
  response.writeHead(reply.status, { 'content-length': String(Buffer.byteLength(reply.body)), ...reply.headers }).end(reply.body);
}

/** Listens (`port: 0` picks a free port) and returns the base URL ("http://127.0.0.1:8080"). */
export async function listenNode(server: Server, where: { port: number; host?: string }): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return listeningUrl(server);
}
