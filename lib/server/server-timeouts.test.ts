// Slow clients against the shared server bootstrap, on real sockets (HTTP and HTTPS): headers or a body
// trickled byte by byte are answered 408 and the connection closed; a silent connection is closed.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../observability/logger.ts';
import { createServer, listen, type KubeloopServer } from './create-server.ts';
import { selfSignedCertificate } from '../../test/support/test-certificate.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const servers: KubeloopServer[] = [];
let certificate: ReturnType<typeof selfSignedCertificate> | undefined;
const timeouts = { headersMs: 300, requestMs: 600, idleMs: 800, keepAliveMs: 500 };
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.app.close()));
});

async function start(https: boolean): Promise<{ port: number; open: () => Socket }> {
  const server = createServer({ logger, timeouts, ...(https ? { https: (certificate ??= selfSignedCertificate('slow.kubeloop.test')) } : {}) });
  server.app.post('/echo', async (request) => request.body);
  servers.push(server);
  const port = Number(new URL(await listen(server.app, { port: 0, host: '127.0.0.1' })).port);
  return { port, open: () => (https ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false }) : netConnect({ port, host: '127.0.0.1' })) };
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

describe.each([false, true])('server timeouts (https: %s)', (https) => {
  it('answers 408 and disconnects a client that trickles its body', async () => {
    const { open } = await start(https);
    const answer = await slowClient(open(), 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"a":"', 'x');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('answers 408 and disconnects a client that trickles its headers', async () => {
    const { open } = await start(https);
    const answer = await slowClient(open(), 'POST /echo HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'abc');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection that sends nothing', async () => {
    const { open } = await start(https);
    const socket = open();
    socket.on('error', () => {});
    // Two timers may fire first at headersMs: the silent-connection check closes without a word, Node's
    // headers timeout has fastify answer 408 and close. Either way the socket must end, so the client reads
    // what it gets: an unread answer would hold back the 'end' (and so the 'close') it is waiting for.
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    await new Promise((resolve) => socket.on('close', resolve));
    if (answer !== '') expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });
});
