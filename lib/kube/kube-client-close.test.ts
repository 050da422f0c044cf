// KubeClient's close() and destroy() with requests in flight, over undici's HTTP/2 and node:http2's writes: each fails
// with KubeClientClosedError, and none ends the process. A local HTTP/2 server holds the requests open, which the API
// server does not do on demand; test/e2e/kube-client-close.test.ts has the same against the real one.
import http2, { type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { localKubeClient } from '../../test/support/local-kube-client.ts';
import { selfSignedCertificate } from '../../test/support/test-certificate.ts';
import { KubeClient, KubeClientClosedError, type KubeClientOptions } from './kube-client.ts';
import { isTransientApiFailure, mayHaveTakenEffect } from './transient.ts';

const certificate = selfSignedCertificate('api-server');
const closers: Array<() => void> = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/**
 * An HTTP/2-only TLS server: /held is answered only when the test says so (`held` resolves with its stream), anything
 * else at once. `settings` are the server's own (a window of 0 keeps a request's body from ever leaving the client).
 */
async function heldServer(settings: http2.Settings = {}) {
  const held: ServerHttp2Stream[] = [];
  let onHeld: () => void = () => {};
  const server = http2.createSecureServer({ key: certificate.key, cert: certificate.cert, settings }, () => {});
  const sessions: http2.ServerHttp2Session[] = [];
  server.on('session', (session: http2.ServerHttp2Session) => sessions.push(session.on('error', () => {})));
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (!headers[':path']?.startsWith('/held')) return void stream.respond({ ':status': 200, 'content-type': 'application/json' }), stream.end('{}');
    held.push(stream);
    onHeld();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => (sessions.forEach((session) => session.destroy()), server.close()));
  /** Resolves with the next request to /held once the server has it. */
  const nextHeld = () => new Promise<ServerHttp2Stream>((resolve) => (onHeld = () => resolve(held.at(-1)!)));
  return { port: (server.address() as AddressInfo).port, nextHeld };
}

async function clientOf(port: number, options: KubeClientOptions = {}): Promise<KubeClient> {
  const client = await localKubeClient(port, certificate.cert, options);
  closers.push(() => void client.destroy());
  return client;
}

const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);
const end = (client: KubeClient, how: 'close' | 'destroy') => (how === 'close' ? client.close() : client.destroy());

describe('KubeClient close() and destroy() with requests in flight', () => {
  it.each([
    ['close', 'undici (HTTP/2)', { http2: true }],
    ['destroy', 'undici (HTTP/2)', { http2: true }],
    ['close', 'node:http2 writes', { http2Writes: true }],
    ['destroy', 'node:http2 writes', { http2Writes: true }],
  ] as const)('%s() fails a POST the server holds over %s with KubeClientClosedError, and refuses the next one unsent', async (how, _, options) => {
    const server = await heldServer();
    const client = await clientOf(server.port, options);
    await client.request({ path: '/api/v1/namespaces' });
    const held = server.nextHeld();
    const posting = failure(client.request({ method: 'POST', path: '/held', body: { kind: 'SelfSubjectAccessReview' } }));
    await held;
    await end(client, how);
    const error = await posting;
    expect(error).toBeInstanceOf(KubeClientClosedError);
    expect(error).toMatchObject({ code: 'ERR_KUBELOOP_CLIENT_CLOSED', inFlight: true, message: 'POST /held: cut short: its KubeClient was closed while it was in flight' });
    // The caller decides: never retried as transient, and it may have been applied.
    expect([isTransientApiFailure(error), mayHaveTakenEffect(error)]).toEqual([false, true]);
    const after = await failure(client.request({ method: 'PATCH', path: '/api/v1/namespaces/a/configmaps/x', body: {} }));
    expect(after).toMatchObject({ name: 'KubeClientClosedError', inFlight: false, message: 'PATCH /api/v1/namespaces/a/configmaps/x: not sent: its KubeClient is closed' });
    expect(mayHaveTakenEffect(after)).toBe(false);
  });

  it.each(['close', 'destroy'] as const)('%s() ends a watch the server keeps open with KubeClientClosedError on its body', async (how) => {
    const server = await heldServer();
    const client = await clientOf(server.port);
    const held = server.nextHeld();
    const watching = client.stream({ path: '/held', query: { watch: true } });
    (await held).respond({ ':status': 200, 'content-type': 'application/json' });
    const body = await watching;
    const read = failure((async () => {
      for await (const _ of body);
    })());
    await end(client, how);
    expect(await read).toMatchObject({ name: 'KubeClientClosedError', inFlight: true, message: 'GET /held: cut short: its KubeClient was closed while it was in flight' });
  });

  it.each(['close', 'destroy'] as const)(
    'resets a request aborted before it had left whole, which the server answered anyway, and %s() then ends the client without an uncaught error',
    async (how) => {
      // undici closes such a request's stream and destroys it at once, so its RST_STREAM is never sent; the server's
      // answer then makes an HTTP/2 stream no request owns, which undici's closing session destroyed with an error.
      const server = await heldServer({ initialWindowSize: 0 });
      const client = await clientOf(server.port);
      await client.request({ path: '/api/v1/namespaces' });
      const held = server.nextHeld();
      const abort = new AbortController();
      const posting = failure(client.request({ method: 'POST', path: '/held', body: { kind: 'ConfigMap' }, signal: abort.signal }));
      const stream = await held;
      abort.abort();
      expect(await posting).toMatchObject({ name: 'AbortError' });
      // A watch event for a request nobody waits for: the client resets it, so the server stops sending.
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.write('{"type":"ADDED","object":{}}\n');
      if (!stream.closed) await new Promise((resolve) => stream.once('close', resolve));
      expect(stream.rstCode).toBe(http2.constants.NGHTTP2_CANCEL);
      await end(client, how);
    },
  );
});
