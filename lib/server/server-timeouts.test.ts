// Slow clients against the shared server bootstrap, on real sockets (HTTP and HTTPS), and against the node:http
// function server the images run: headers or a body trickled byte by byte are answered 408 and the connection
// closed; a silent connection is closed.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../observability/logger.ts';
import { createServer, listen, type KubeloopServer } from './create-server.ts';
import { selfSignedCertificate } from '../../test/support/test-certificate.ts';
import { serveNodeFunction } from '../runtime/node-function-server.ts';
import { defineFunction } from '../sdk/define-function.ts';
import { respond } from '../sdk/actions.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const servers: KubeloopServer[] = [];
const closers: Array<() => Promise<void>> = [];
let certificate: ReturnType<typeof selfSignedCertificate> | undefined;
const timeouts = { headersMs: 300, requestMs: 600, idleMs: 800, keepAliveMs: 500 };
afterEach(async () => {
  await Promise.all([...servers.splice(0).map((s) => s.app.close()), ...closers.splice(0).map((close) => close())]);
});

type Kind = 'fastify http' | 'fastify https' | 'function image (node:http)';

async function start(kind: Kind): Promise<{ port: number; open: () => Socket; path: string }> {
  if (kind === 'function image (node:http)') {
    const served = await serveNodeFunction(defineFunction({ name: 'slow', reconcile: () => respond([]) }), { port: 0, host: '127.0.0.1', logger, timeouts });
    closers.push(served.close);
    const port = Number(new URL(served.url).port);
    return { port, open: () => netConnect({ port, host: '127.0.0.1' }), path: '/' };
  }
  const https = kind === 'fastify https';
  const server = createServer({ logger, timeouts, ...(https ? { https: (certificate ??= selfSignedCertificate('slow.kubeloop.test')) } : {}) });
  server.app.post('/echo', async (request) => request.body);
  servers.push(server);
  const port = Number(new URL(await listen(server.app, { port: 0, host: '127.0.0.1' })).port);
  return { port, open: () => (https ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : netConnect({ port, host: '127.0.0.1' })), path: '/echo' };
}

/** Writes `head`, then one byte of `trickle` every 50 ms until the server closes; resolves with what it answered. */
function slowClient(socket: Socket, head: string, trickle: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    let i = 0;
    const timer = setInterval(() => socket.writable && socket.write(trickle[i++ % trickle.length] ?? ' '), 50);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => {}); // a reset after the 408 is the server hanging up, which is what is tested
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    });
    socket.write(head, (error) => error && reject(error));
  });
}

describe.each(['fastify http', 'fastify https', 'function image (node:http)'] as const)('server timeouts (%s)', (kind) => {
  it('answers 408 and disconnects a client that trickles its body', async () => {
    const { open, path } = await start(kind);
    const answer = await slowClient(open(), `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":"`, 'x');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('answers 408 and disconnects a client that trickles its headers', async () => {
    const { open, path } = await start(kind);
    const answer = await slowClient(open(), `POST ${path} HTTP/1.1\r\nHost: x\r\nX-Slow: `, 'abc');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection that sends nothing', async () => {
    const { open } = await start(kind);
    // Two timers may fire first at headersMs: the silent-connection check closes without a word, Node's
    // headers timeout has fastify answer 408 and close. Either way the socket must end, so the client reads
    // what it gets: an unread answer would hold back the 'end' (and so the 'close') it is waiting for.
    const answer = await untilClosed(open());
    if (answer !== '') expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('keeps a connection alive between requests, saying for how long, and closes it once idle that long', async () => {
    const { open } = await start(kind);
    const answer = await untilClosed(open(), 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toMatch(/\r\nConnection: keep-alive\r\nKeep-Alive: timeout=0\r\n/);
  });
});

/** Writes `text` (if any) and resolves with everything the server sent once it closed the connection. */
function untilClosed(socket: Socket, text?: string): Promise<string> {
  socket.on('error', () => {});
  let answer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (answer += chunk));
  if (text !== undefined) socket.write(text);
  return new Promise((resolve) => socket.on('close', () => resolve(answer)));
}
