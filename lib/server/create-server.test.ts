import { connect } from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { request as undiciRequest } from 'undici';
import { createLogger } from '../observability/logger.ts';
import { counter } from '../observability/metrics.ts';
import { createServer, listen, setServingCertificate, type KubeloopServer } from './create-server.ts';
import { shutdown } from './shutdown.ts';
import { selfSignedCertificate } from '../../test/support/test-certificate.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const servers: KubeloopServer[] = [];
function make(options: Partial<Parameters<typeof createServer>[0]> = {}): KubeloopServer {
  const server = createServer({ logger, ...options });
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.app.close()));
});

describe('createServer', () => {
  it('answers /healthz and /readyz from the readiness callback', async () => {
    let ready = false;
    const { app } = make({ ready: () => ready });
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(503);
    ready = true;
    expect((await app.inject({ url: '/readyz' })).json()).toEqual({ status: 'ready' });
  });

  it('serves the metrics of its own registry in Prometheus text format', async () => {
    const server = make();
    counter(server.metrics, 'kubeloop_test_things_total', 'things').inc(3);
    const reply = await server.app.inject({ url: '/metrics' });
    expect(reply.headers['content-type']).toContain('text/plain');
    expect(reply.body).toContain('kubeloop_test_things_total 3');
    expect(reply.body).toContain('process_cpu_user_seconds_total');
  });

  it('turns a thrown error into a 500 with an error id and keeps serving', async () => {
    const { app } = make();
    app.get('/boom', async () => {
      throw new Error('secret internals');
    });
    const reply = await app.inject({ url: '/boom' });
    expect(reply.statusCode).toBe(500);
    const body = reply.json<{ code: string; message: string; errorId: string }>();
    expect(body.code).toBe('InternalError');
    expect(body.message).toContain(body.errorId);
    expect(body.message).not.toContain('secret');
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('passes 4xx errors through with their message', async () => {
    const { app } = make();
    app.post('/echo', async (request) => request.body);
    const reply = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{nope' });
    expect(reply.statusCode).toBe(400);
    expect(reply.json<{ message: string }>().message).toMatch(/JSON/);
    const missing = await app.inject({ url: '/nowhere' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json<{ message: string }>().message).toBe('no route GET /nowhere');
  });

  it('rejects a body over the configured limit with 413', async () => {
    const { app } = make({ bodyLimitBytes: 1024 });
    app.post('/echo', async () => ({ ok: true }));
    const reply = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ pad: 'x'.repeat(2000) }) });
    expect(reply.statusCode).toBe(413);
  });

  it('drains an in-flight request on shutdown, fails readiness and then refuses connections', async () => {
    const server = make();
    let release: () => void = () => {};
    let started: () => void = () => {};
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    server.app.get('/slow', async () => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
      return { done: true };
    });
    const url = await listen(server.app, { port: 0, host: '127.0.0.1' });
    const slow = undiciRequest(`${url}/slow`);
    await inFlight;
    const closed = shutdown(server, { timeoutMs: 5000 });
    expect(server.isClosing()).toBe(true);
    release();
    const reply = await slow;
    expect(await reply.body.json()).toEqual({ done: true });
    await closed;
    await expect(undiciRequest(`${url}/healthz`)).rejects.toThrow();
  });

  it('serves HTTPS and swaps the certificate without restarting', async () => {
    const first = selfSignedCertificate('first.kubeloop.test');
    const server = make({ https: first });
    const url = await listen(server.app, { port: 0, host: '127.0.0.1' });
    const port = Number(new URL(url).port);
    expect(url.startsWith('https://')).toBe(true);
    const peerName = () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => {
          resolve(String(socket.getPeerCertificate().subject.CN));
          socket.end();
        });
        socket.on('error', reject);
      });
    expect(await peerName()).toBe('first.kubeloop.test');
    setServingCertificate(server.app, selfSignedCertificate('second.kubeloop.test'));
    expect(await peerName()).toBe('second.kubeloop.test');
  });
});
