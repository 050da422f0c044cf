// The router's ops server on node:http (lib/server/ops-server.ts) answers byte for byte as the fastify bootstrap
// it replaced (create-server.ts with the router's settings): health, readiness before and after the router is
// ready, metrics in both formats, unknown routes and parser errors; and it drains on shutdown the same way.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as undiciRequest } from 'undici';
import { Counter, Gauge, Registry } from 'prom-client';
import { createLogger } from '../../lib/observability/logger.ts';
import { createServer, listen } from '../../lib/server/create-server.ts';
import { listenNode } from '../../lib/server/node-server.ts';
import { createOpsServer } from '../../lib/server/ops-server.ts';
import { shutdown } from '../../lib/server/shutdown.ts';
import { answers, expectAlike, raw, rawRequest } from './raw-http.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

const request = (method: string, path: string, headers = '', payload?: string) => rawRequest('router', method, path, headers, payload);

describe("the router's node:http ops server against the fastify one", () => {
  const registry = new Registry();
  new Counter({ name: 'kubeloop_router_test_total', help: 'a counter both servers serve', registers: [registry] }).inc(3);
  let ready = false;
  const urls = { fastify: '', node: '' };
  const closers: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    // As `kubeloop router` built it before: its registry, its readiness, its body limit.
    const fastify = createServer({ logger, metrics: registry, bodyLimitBytes: 16 * 1024, ready: () => ready });
    urls.fastify = await listen(fastify.app, { port: 0, host: '127.0.0.1' });
    closers.push(() => fastify.app.close());
    const ops = createOpsServer({ logger, metrics: registry, ready: () => ready });
    urls.node = await listenNode(ops.server, { port: 0, host: '127.0.0.1' });
    closers.push(() => ops.close());
  });
  afterAll(async () => {
    for (const close of closers) await close();
  });
  const bothAlike = (text: string) => expectAlike(urls.fastify, urls.node, text);

  it.each([
    ['GET /healthz', request('GET', '/healthz')],
    ['HEAD /healthz', request('HEAD', '/healthz')],
    ['GET /healthz with a query', request('GET', '/healthz?verbose')],
    ['a percent-encoded path', request('GET', '/health%7A')],
    ['a bad percent escape', request('GET', '/%zz')],
    ['GET /readyz while the router is not ready', request('GET', '/readyz')],
    ['an unknown path', request('GET', '/nope?a=b')],
    ['a trailing slash', request('GET', '/healthz/')],
    ['POST /healthz', request('POST', '/healthz', 'Content-Type: application/json\r\n', '{}')],
    ['DELETE /metrics', request('DELETE', '/metrics')],
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['headers over the size limit', `GET /healthz HTTP/1.1\r\nHost: router\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('answers %s alike', async (_case, text) => bothAlike(text));

  it('answers GET /readyz alike once the router is ready', async () => {
    ready = true;
    try {
      await bothAlike(request('GET', '/readyz'));
      expect(await raw(urls.node, request('GET', '/readyz'))).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\{"status":"ready"\}$/);
    } finally {
      ready = false;
    }
  });

  it.each([
    ['Prometheus text', '', 'text/plain; version=0.0.4; charset=utf-8'],
    ['OpenMetrics when asked for', 'Accept: application/openmetrics-text\r\n', 'application/openmetrics-text; version=1.0.0; charset=utf-8'],
  ])('serves /metrics as %s alike', async (_case, accept, type) => {
    await bothAlike(request('GET', '/metrics', accept));
    const answer = await raw(urls.node, request('GET', '/metrics', accept));
    expect(answer.toLowerCase()).toContain(`content-type: ${type}`);
    expect(answer).toContain('kubeloop_router_test_total 3');
  });
});

/** An ops server serving `registry`, its logged errors kept. */
async function opsLogging(registry: Registry) {
  const errors: unknown[] = [];
  const recording = Object.assign(createLogger({ name: 'test', level: 'silent' }), { error: (object: unknown) => void errors.push(object) });
  const ops = createOpsServer({ logger: recording, metrics: registry, ready: () => true });
  return { ops, url: await listenNode(ops.server, { port: 0, host: '127.0.0.1' }), errors };
}

describe("the router's ops server on shutdown", () => {
  it('fails readiness, finishes the scrape in flight, answers its next request 503 with the connection closed, then refuses connections', async () => {
    // A scrape held in flight until the test lets it finish.
    let finish = () => {};
    const held = new Promise<void>((resolve) => (finish = resolve));
    const registry = new Registry();
    new Counter({ name: 'slow_total', help: 'collected once the test says so', registers: [registry], collect: () => held });
    const ops = createOpsServer({ logger, metrics: registry, ready: () => true });
    const url = await listenNode(ops.server, { port: 0, host: '127.0.0.1' });
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    const reader = answers(socket);
    socket.write('GET /readyz HTTP/1.1\r\nHost: router\r\n\r\n');
    expect(await reader.next(/^HTTP\/1\.1 200 OK[\s\S]*\{"status":"ready"\}$/)).toMatch(/connection: keep-alive/i);
    socket.write('GET /metrics HTTP/1.1\r\nHost: router\r\n\r\n');

    ops.beginClosing();
    const readyz = await undiciRequest(`${url}/readyz`, { reset: true });
    expect(readyz.statusCode).toBe(503);
    expect(await readyz.body.json()).toEqual({ status: 'not ready' });

    const closed = shutdown(ops, { timeoutMs: 5000 });
    finish();
    // The page streams as it is rendered: sent chunked, its last chunk the empty one.
    const scrape = await reader.next(/^HTTP\/1\.1 200 OK[\s\S]*slow_total 0\n\r\n0\r\n\r\n$/);
    expect(scrape).toMatch(/connection: keep-alive/i);
    expect(scrape).toMatch(/transfer-encoding: chunked/i);
    socket.write('GET /healthz HTTP/1.1\r\nHost: router\r\n\r\n');
    const refused = await reader.next(/^HTTP\/1\.1 503 [\s\S]*\}$/);
    expect(refused).toMatch(/connection: close/i);
    await reader.closed;
    await closed;
    await expect(undiciRequest(`${url}/healthz`)).rejects.toThrow();
  });

  it('answers 500 with a logged error id when the metrics cannot be read', async () => {
    const registry = new Registry();
    registry.registerMetric(new Counter({ name: 'broken_total', help: 'throws when read', registers: [], collect: () => Promise.reject(new Error('collect failed')) }));
    const { ops, url, errors } = await opsLogging(registry);
    try {
      const answer = await undiciRequest(`${url}/metrics`);
      expect(answer.statusCode).toBe(500);
      const body = (await answer.body.json()) as { code: string; errorId: string };
      expect(body.code).toBe('InternalError');
      expect(errors).toEqual([expect.objectContaining({ errorId: body.errorId })]);
    } finally {
      await ops.close();
    }
  });

  it('streams a large page as it renders it: the whole of it, HEAD without rendering, and a scraper hanging up mid-page costs the router nothing', async () => {
    const registry = new Registry();
    const conditions = new Gauge({ name: 'kubeloop_loop_condition', help: 'per Loop', labelNames: ['loop', 'status'], registers: [registry] });
    for (let l = 0; l < 5000; l++) for (const status of ['True', 'False']) conditions.set({ loop: `scale-${l}/copier`, status }, status === 'True' ? 1 : 0);
    const { ops, url, errors } = await opsLogging(registry);
    try {
      const answer = await undiciRequest(`${url}/metrics`);
      expect(answer.statusCode).toBe(200);
      expect(answer.headers['transfer-encoding']).toBe('chunked');
      expect(await answer.body.text()).toBe(await registry.metrics());
      const head = await undiciRequest(`${url}/metrics`, { method: 'HEAD' });
      expect([head.statusCode, head.headers['content-type'], await head.body.text()]).toEqual([200, registry.contentType, '']);
      // A scraper that reads the first bytes of the page and hangs up: the next request is answered, nothing logged.
      const socket = connect(Number(new URL(url).port), '127.0.0.1');
      await new Promise<void>((resolve) => {
        socket.once('data', () => {
          socket.destroy();
          resolve();
        });
        socket.write('GET /metrics HTTP/1.1\r\nHost: router\r\n\r\n');
      });
      expect((await undiciRequest(`${url}/healthz`)).statusCode).toBe(200);
      expect(errors).toEqual([]);
    } finally {
      await ops.close();
    }
  });

  it('ends the connection, and logs why, when a family fails after the page began: a scraper never takes a cut page as whole', async () => {
    const registry = new Registry();
    const conditions = new Gauge({ name: 'kubeloop_loop_condition', help: 'per Loop', labelNames: ['loop'], registers: [registry] });
    for (let l = 0; l < 2000; l++) conditions.set({ loop: `scale-${l}/copier` }, 1);
    new Counter({ name: 'broken_total', help: 'throws when read', registers: [registry], collect: () => Promise.reject(new Error('collect failed')) });
    const { ops, url, errors } = await opsLogging(registry);
    try {
      const answer = await undiciRequest(`${url}/metrics`);
      expect(answer.statusCode).toBe(200);
      await expect(answer.body.text()).rejects.toThrow();
      expect(errors).toEqual([expect.objectContaining({ err: expect.objectContaining({ message: 'collect failed' }) })]);
      expect((await undiciRequest(`${url}/healthz`)).statusCode).toBe(200);
    } finally {
      await ops.close();
    }
  });
});
