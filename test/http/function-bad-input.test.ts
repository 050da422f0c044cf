// Bad input where the transport matters, on real sockets: streamed bodies over the limit, requests
// without a content type, clients that hang up mid-body, and the log line a failing function leaves.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, toNodeHandler, type ServedFunction } from '../../lib/runtime/index.ts';
import { exampleFunction, MISBEHAVE_LABEL, podRequest } from './example-function.ts';

const LIMIT = 16 * 1024;
const logLines: Array<Record<string, unknown>> = [];
const destination = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n')) if (line.trim()) logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});
let served: ServedFunction;
let nodeServer: Server;
let nodeUrl = '';

beforeAll(async () => {
  const logger = createLogger({ name: 'function/example-labeller', level: 'info', destination });
  served = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logger, bodyLimitBytes: LIMIT });
  nodeServer = createServer(toNodeHandler(exampleFunction, { logger, bodyLimitBytes: LIMIT }));
  await new Promise<void>((resolve) => nodeServer.listen(0, '127.0.0.1', resolve));
  nodeUrl = `http://127.0.0.1:${(nodeServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await served.close();
  await new Promise((resolve) => nodeServer.close(resolve));
});

/** Sends with Node's http client so headers and body framing are exactly what the test says. */
function raw(options: { headers: Record<string, string>; chunks: string[]; abortAfterFirst?: boolean; base?: string }): Promise<{ status: number; body: string }> {
  const url = new URL(options.base ?? served.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path: '/', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    if (options.abortAfterFirst) {
      req.write(options.chunks[0] ?? '');
      setImmediate(() => {
        req.destroy();
        resolve({ status: 0, body: '' });
      });
      return;
    }
    for (const chunk of options.chunks) req.write(chunk);
    req.end();
  });
}

async function stillServes(base = served.url): Promise<void> {
  const reply = await request(`${base}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(podRequest()) });
  expect(reply.statusCode).toBe(200);
  await reply.body.dump();
}

describe('function server on a real socket', () => {
  it.each([
    ['fastify server', () => served.url],
    ['Node handler', () => nodeUrl],
  ])('%s rejects a chunked body that grows past the limit with 413 and keeps serving', async (_name, base) => {
    const chunk = 'x'.repeat(4096);
    const reply = await raw({ base: base(), headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, chunks: ['{"pad":"', chunk, chunk, chunk, chunk, chunk, '"}'] });
    expect(reply.status).toBe(413);
    expect(JSON.parse(reply.body)).toMatchObject({ code: 'PayloadTooLarge' });
    await stillServes(base());
  });

  it('rejects a request without a content type with 415 naming what is accepted', async () => {
    const reply = await raw({ headers: { 'content-length': String(Buffer.byteLength(JSON.stringify(podRequest()))) }, chunks: [JSON.stringify(podRequest())] });
    expect(reply.status).toBe(415);
    expect((JSON.parse(reply.body) as { message: string }).message).toMatch(/no content type is not supported; send application\/json/);
  });

  it.each([
    ['fastify server', () => served.url],
    ['Node handler', () => nodeUrl],
  ])('%s survives a client that hangs up halfway through the body', async (_name, base) => {
    await raw({ base: base(), headers: { 'content-type': 'application/json', 'content-length': '5000' }, chunks: ['{"apiVersion":'], abortAfterFirst: true });
    await stillServes(base());
  });

  it('logs an exception inside the function once, with the reconcile id, loop and key', async () => {
    const body = JSON.stringify(podRequest({ labels: { [MISBEHAVE_LABEL]: 'throw' }, reconcileId: 'rec-logged' }));
    const reply = await request(`${served.url}/reconcile`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(reply.statusCode).toBe(500);
    expect(reply.headers['x-kubeloop-reconcile-id']).toBe('rec-logged');
    await reply.body.dump();
    const logged = logLines.filter((line) => line.reconcileId === 'rec-logged');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'error', loop: 'example', key: 'shop/web-0', code: 'FunctionError' });
    expect(JSON.stringify(logged[0]?.err)).toContain('cannot reconcile this object');
  });
});
