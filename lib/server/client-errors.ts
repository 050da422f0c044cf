// The answer to a request Node's HTTP parser refused before any handler saw it (malformed, headers too large,
// a headers or request timeout): fastify's own answer, so the fastify bootstrap and the node:http function
// server both use this one and reply alike.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

interface TraceLogger {
  trace(object: object, message: string): void;
}

export function answerClientError(log: TraceLogger): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // A reset connection is already gone: nothing to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, message, label] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Client Timeout', 'timeout']
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Exceeded maximum allowed HTTP header size', 'header_overflow']
          : [400, 'Client Error', 'error'];
    const reason = STATUS_CODES[status] ?? '';
    const body = `{"error":"${reason}","message":"${message}","statusCode":${status}}`;
    // Mostly network trouble or a load balancer's settings: worth a trace line, not an error.
    log.trace({ err: error }, `client ${label}`);
    if (socket.writable) socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${body.length}\r\nContent-Type: application/json\r\n\r\n${body}`);
    socket.destroy(error);
  };
}
