import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { classifyResponse, createHttpInvoker, parseRetryAfter } from './dispatch.ts';

const ok = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] });

describe('classifyResponse', () => {
  it('accepts a valid 200 reply', () => {
    expect(classifyResponse(200, ok).kind).toBe('ok');
  });
  it('treats garbage and schema violations as failures, not successes', () => {
    expect(classifyResponse(200, '<html>')).toMatchObject({ kind: 'failed', reason: 'InvalidResponse' });
    expect(classifyResponse(200, '{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileResponse","actions":[{"op":"explode"}]}')).toMatchObject({
      kind: 'failed',
      reason: 'InvalidResponse',
    });
    expect(classifyResponse(204, '')).toMatchObject({ kind: 'failed', reason: 'InvalidResponse' });
  });
  it('separates throttling, server errors and rejections', () => {
    expect(classifyResponse(429, 'slow down', '3')).toEqual({ kind: 'throttled', status: 429, retryAfterMs: 3000, message: 'slow down' });
    expect(classifyResponse(503, 'down')).toMatchObject({ kind: 'failed', reason: 'ServerError' });
    expect(classifyResponse(400, '{"message":"bad"}')).toMatchObject({ kind: 'rejected', status: 400 });
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('createHttpInvoker over a real socket', () => {
  let server: Server;
  let base: string;
  const invoker = createHttpInvoker();
  const request = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', reconcileId: 'r1', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: {} }, children: {}, now: new Date().toISOString() } as ReconcileRequest;
  const seenHeaders: Record<string, unknown>[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seenHeaders.push(req.headers);
      if (req.url === '/slow') return void setTimeout(() => res.end(ok), 500);
      res.setHeader('content-type', 'application/json');
      res.end(ok);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await invoker.close();
    server.close();
  });
  it('posts a binary-mode CloudEvent and parses the reply', async () => {
    const result = await invoker(request, { url: `${base}/`, timeoutMs: 2000 });
    expect(result.kind).toBe('ok');
    expect(seenHeaders.at(-1)).toMatchObject({ 'ce-type': 'dev.kubeloop.reconcile.v1', 'ce-id': 'r1', 'content-type': 'application/json' });
  });
  it('reports a timeout when the function is slower than the Loop allows', async () => {
    expect(await invoker(request, { url: `${base}/slow`, timeoutMs: 100 })).toMatchObject({ kind: 'failed', reason: 'Timeout' });
  });
  it('reports an unreachable function', async () => {
    expect(await invoker(request, { url: 'http://127.0.0.1:1/', timeoutMs: 1000 })).toMatchObject({ kind: 'failed', reason: 'Unreachable' });
  });
});
