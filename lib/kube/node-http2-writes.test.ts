// KubeClient's writes over node:http2 (http2Writes) against the same writes over HTTP/1.1, and the HTTP/2
// session's life: GOAWAY, a dropped connection, a server without HTTP/2. A local TLS server stands in for the
// API server: these tests are about the transport; test/e2e/kube-client-http2-writes.test.ts has the real one.
import http2, { type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { localKubeClient } from '../../test/support/local-kube-client.ts';
import { selfSignedCertificate } from '../../test/support/test-certificate.ts';
import { KubeApiError, KubeClient, type KubeClientOptions, type KubeRequestSample } from './kube-client.ts';
import { isTransientApiFailure, mayHaveTakenEffect } from './transient.ts';

const certificate = selfSignedCertificate('api-server');
const STATUS = (code: number, reason: string) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `${reason} here` });

/** What HTTP/1.1 carries in headers and HTTP/2 in its framing (:authority, DATA frames). */
const TRANSPORT_HEADERS = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

interface Seen {
  method: string;
  url: string;
  httpVersion: string;
  headers: Record<string, string>;
}

/** The part of a response (HTTP/1.1's or the HTTP/2 compatibility API's) the answers below use. */
interface Response {
  writeHead(statusCode: number, headers?: Record<string, string>): unknown;
  end(body: string): unknown;
}

/** Answers like the API server by path: a Status for /conflict, /invalid, /throttled (Retry-After), JSON else. */
function answer(req: IncomingMessage | Http2ServerRequest, res: Response, body: string): void {
  const json = { 'content-type': 'application/json' };
  const reply = (statusCode: number, headers: Record<string, string>, text = '') => (res.writeHead(statusCode, headers), res.end(text));
  if (req.url?.startsWith('/conflict')) return void reply(409, json, STATUS(409, 'Conflict'));
  if (req.url?.startsWith('/invalid')) return void reply(422, json, STATUS(422, 'Invalid'));
  if (req.url?.startsWith('/throttled')) return void reply(429, { ...json, 'retry-after': '3' }, STATUS(429, 'TooManyRequests'));
  if (req.url?.startsWith('/hang')) return;
  reply(req.method === 'POST' ? 201 : 200, json, JSON.stringify({ kind: 'ConfigMap', echo: body === '' ? null : JSON.parse(body) }));
}

type Handler = (req: Http2ServerRequest, res: Http2ServerResponse, body: string) => void;

const closers: Array<() => void> = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/** An HTTPS server speaking HTTP/2 and HTTP/1.1 (ALPN), recording every request; `sessions` counts HTTP/2 connections. */
async function apiServer(handle: Handler = answer) {
  const seen: Seen[] = [];
  const sessions: ServerHttp2Session[] = [];
  const server = http2.createSecureServer({ key: certificate.key, cert: certificate.cert, allowHTTP1: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (!name.startsWith(':') && !TRANSPORT_HEADERS.has(name) && typeof value === 'string') headers[name] = value;
      seen.push({ method: req.method, url: req.url, httpVersion: req.httpVersion, headers });
      handle(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });
  let sessionOpened: () => void = () => {};
  server.on('session', (session: ServerHttp2Session) => {
    sessions.push(session);
    sessionOpened();
    session.on('error', () => {});
  });
  server.on('stream', (stream) => stream.on('error', () => {}));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const session of sessions) session.destroy();
    server.close();
  });
  /** Resolves when the server has `count` sessions in all. */
  const sessionsOpened = (count: number) =>
    new Promise<void>((resolve) => {
      sessionOpened = () => sessions.length >= count && resolve();
      sessionOpened();
    });
  return { seen, sessions, sessionsOpened, port: (server.address() as AddressInfo).port };
}

async function clientOf(port: number, options: KubeClientOptions = {}): Promise<KubeClient> {
  const client = await localKubeClient(port, certificate.cert, options);
  closers.push(() => void client.destroy());
  return client;
}

const HTTP1: KubeClientOptions = { http2: false };
const HTTP2_WRITES: KubeClientOptions = { http2: false, http2Writes: true };
const patch = (client: KubeClient, path = '/api/v1/namespaces/a/configmaps/x') =>
  client.request<{ echo: unknown }>({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { data: { k: 'v' } } });
const outcome = (promise: Promise<unknown>) => promise.then((value) => ({ value }), (error: unknown) => ({ error }));

describe('KubeClient writes over node:http2', () => {
  it('answers and refuses as over HTTP/1.1: bodies, Status errors, Retry-After, the headers sent, the limiter and the samples', async () => {
    const server = await apiServer();
    const run = async (options: KubeClientOptions) => {
      let taken = 0;
      const samples: Array<Omit<KubeRequestSample, 'seconds'>> = [];
      const router = await clientOf(server.port, { ...options, rateLimit: { take: async () => void taken++ }, onRequest: ({ seconds: _, ...sample }) => samples.push(sample) });
      const loop = router.impersonating({ user: 'system:serviceaccount:team-a:reconciler' }, { take: async () => void taken++ });
      const traced = { headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } };
      const results = [
        await outcome(loop.request({ method: 'POST', path: '/api/v1/namespaces/a/configmaps', body: { metadata: { name: 'x' } }, ...traced })),
        await outcome(patch(loop)),
        await outcome(router.request({ method: 'PUT', path: '/api/v1/namespaces/a/configmaps/x', body: { metadata: { name: 'x' } } })),
        await outcome(loop.request({ method: 'DELETE', path: '/api/v1/namespaces/a/configmaps/x' })),
        // DeleteOptions travel in a DELETE's body (the router's preconditions and propagationPolicy).
        await outcome(loop.request({ method: 'DELETE', path: '/api/v1/namespaces/a/configmaps/x', body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'u-1' } } })),
        await outcome(patch(loop, '/conflict')),
        await outcome(patch(loop, '/invalid')),
        await outcome(patch(loop, '/throttled')),
      ].map((r) => ('error' in r ? { error: errorShape(r.error) } : r));
      const seen = server.seen.splice(0);
      return { results, taken, samples, sent: seen.map(({ httpVersion: _, ...s }) => s), versions: seen.map((s) => s.httpVersion) };
    };
    const over1 = await run(HTTP1);
    const over2 = await run(HTTP2_WRITES);
    expect(over1.versions.every((v) => v === '1.1')).toBe(true);
    expect(over2.versions.every((v) => v === '2.0')).toBe(true);
    expect(over2.results).toEqual(over1.results);
    expect(over2.sent).toEqual(over1.sent);
    expect(over2.samples).toEqual(over1.samples);
    expect(over2.taken).toBe(over1.taken);
    // What both said, once: the bodies (a DELETE's too), a 409, a 422 and a 429 with its Retry-After, the trace context and impersonation.
    expect(over1.results[0]).toEqual({ value: { kind: 'ConfigMap', echo: { metadata: { name: 'x' } } } });
    expect(over1.results[4]).toEqual({ value: { kind: 'ConfigMap', echo: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'u-1' } } } });
    expect(over1.results.slice(5)).toEqual([
      { error: { statusCode: 409, reason: 'Conflict', retryAfterSeconds: undefined, transient: false } },
      { error: { statusCode: 422, reason: 'Invalid', retryAfterSeconds: undefined, transient: false } },
      { error: { statusCode: 429, reason: 'TooManyRequests', retryAfterSeconds: 3, transient: true } },
    ]);
    expect(over1.sent[0]?.headers).toMatchObject({ authorization: 'Bearer router-token', 'impersonate-user': 'system:serviceaccount:team-a:reconciler', traceparent: expect.stringMatching(/^00-/) });
    expect(over1.sent[2]?.headers['impersonate-user']).toBeUndefined();
    expect(over1.taken).toBe(8);
  });

  it('opens a new session after a GOAWAY, and sends again the writes the GOAWAY refused', async () => {
    // Every answer is followed by a GOAWAY, as the API server's --goaway-chance does; the first session also
    // refuses every stream after its first, which the client must send again on the next one.
    const server = await apiServer((req, res, body) => {
      const session = req.stream.session!;
      const first = server.sessions[0] === session;
      if (first && (req.stream.id ?? 0) > 1) return void session.goaway(http2.constants.NGHTTP2_NO_ERROR, 1);
      answer(req, res, body);
      res.on('finish', () => session.goaway(http2.constants.NGHTTP2_NO_ERROR, req.stream.id));
    });
    const client = await clientOf(server.port, HTTP2_WRITES);
    const together = await Promise.all([patch(client), patch(client), patch(client)]);
    expect(together.map((r) => r.echo)).toEqual(Array(3).fill({ data: { k: 'v' } }));
    const sessionsBefore = server.sessions.length;
    await patch(client);
    await patch(client);
    expect(server.sessions.length).toBe(sessionsBefore + 2);
    expect(server.seen.every((s) => s.httpVersion === '2.0')).toBe(true);
  });

  it('opens a new session after the connection drops', async () => {
    const server = await apiServer((req, res, body) => {
      const session = req.stream.session!;
      answer(req, res, body);
      res.on('finish', () => setImmediate(() => session.destroy()));
    });
    const client = await clientOf(server.port, HTTP2_WRITES);
    await patch(client);
    await new Promise<void>((resolve) => server.sessions[0]!.on('close', resolve));
    expect((await patch(client)).echo).toEqual({ data: { k: 'v' } });
    expect(server.sessions).toHaveLength(2);
  });

  it('closes: close() resolves in a process with nothing else to do, so what a stop does after it still runs', async () => {
    // HTTP/2 only, as the API server: with HTTP/1.1 allowed too, Node's server happened to hide the hang.
    const server = http2.createSecureServer({ key: certificate.key, cert: certificate.cert }, (req, res) => void req.resume().on('end', () => res.end('{}')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../test/support/http2-writes-close-child.ts', import.meta.url)), JSON.stringify({ port, ca: certificate.cert })], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(out).toContain('closed');
    expect(code).toBe(0);
  });

  it('warm() opens the write session before the first write, which then takes it', async () => {
    const server = await apiServer();
    const client = await clientOf(server.port, HTTP2_WRITES);
    client.warm();
    await server.sessionsOpened(1);
    expect(server.seen).toEqual([]);
    expect((await patch(client)).echo).toEqual({ data: { k: 'v' } });
    expect(server.sessions).toHaveLength(1);
    expect(server.seen.map((s) => `${s.method} ${s.httpVersion}`)).toEqual(['PATCH 2.0']);
    await client.close();
    // A router stopped while its session is still connecting stops all the same.
    const stopping = await clientOf(server.port, HTTP2_WRITES);
    stopping.warm();
    await stopping.close();
  });

  it('warm() against a server that refuses the connection fails nothing: writes fail and connect as without it, close() resolves', async () => {
    const closed = await apiServer();
    closers.pop()?.();
    const refused = await clientOf(closed.port, HTTP2_WRITES);
    expect(() => refused.warm()).not.toThrow();
    const failure = await outcome(patch(refused));
    expect('error' in failure && errorShape(failure.error)).toEqual({ transient: true, mayHaveTakenEffect: false });
    refused.warm();
    await refused.close();
  });

  it.each([
    ['refuses h2 by ALPN (Node https)', false],
    ['ignores ALPN', true],
  ])('sends every write over HTTP/1.1 to a server that %s', async (_, ignoresAlpn) => {
    const seen: string[] = [];
    const http1 = createHttpServer((req, res) => {
      seen.push(`${req.method} HTTP/${req.httpVersion}`);
      req.resume().on('end', () => answer(req, res, '{}'));
    });
    const server: TlsServer = createTlsServer({ key: certificate.key, cert: certificate.cert, ...(ignoresAlpn ? {} : { ALPNProtocols: ['http/1.1'] }) }, (socket) => http1.emit('connection', socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    const client = await clientOf((server.address() as AddressInfo).port, HTTP2_WRITES);
    expect((await patch(client)).echo).toEqual({});
    await client.request({ method: 'POST', path: '/api/v1/namespaces/a/configmaps', body: {} });
    expect(seen).toEqual(['PATCH HTTP/1.1', 'POST HTTP/1.1']);
  });

  it('fails a write the server never answers, or that cannot connect, as over HTTP/1.1: transient, and whether it was sent', async () => {
    const server = await apiServer();
    const closed = await apiServer();
    closers.pop()?.();
    const failures = async (options: KubeClientOptions) => {
      const hanging = await clientOf(server.port, { ...options, requestTimeoutMs: 300 });
      const refused = await clientOf(closed.port, options);
      return [await outcome(patch(hanging, '/hang')), await outcome(patch(refused))].map((r) => ('error' in r ? errorShape(r.error) : r));
    };
    const over1 = await failures(HTTP1);
    expect(await failures(HTTP2_WRITES)).toEqual(over1);
    expect(over1).toEqual([
      { transient: true, mayHaveTakenEffect: true },
      { transient: true, mayHaveTakenEffect: false },
    ]);
  });
});

/** What callers act on: an API error's status, reason and Retry-After; for the rest, whether to retry and whether it may have been applied. */
function errorShape(error: unknown) {
  if (error instanceof KubeApiError) return { statusCode: error.statusCode, reason: error.reason, retryAfterSeconds: error.retryAfterSeconds, transient: isTransientApiFailure(error) };
  return { transient: isTransientApiFailure(error), mayHaveTakenEffect: mayHaveTakenEffect(error) };
}
