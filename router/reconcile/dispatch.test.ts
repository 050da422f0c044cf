import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import type { CallOutcome } from '../../lib/function-client/function-client.ts';
import { classifyOutcome, createHttpInvoker } from './dispatch.ts';

const ok = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] });
const reply = (value: unknown): CallOutcome => ({ kind: 'reply', status: 200, headers: {}, value });
const status = (code: number, detail: string, headers: Record<string, string> = {}): CallOutcome => ({ kind: 'status', status: code, headers, detail });

describe('classifyOutcome', () => {
  it('accepts a valid 200 reply', () => {
    expect(classifyOutcome(reply(JSON.parse(ok))).kind).toBe('ok');
  });
  it('treats garbage and schema violations as failures, not successes', () => {
    expect(classifyOutcome({ kind: 'failed', reason: 'NotJson', status: 200, message: 'reply is not JSON' })).toMatchObject({ kind: 'failed', reason: 'InvalidResponse' });
    expect(classifyOutcome(reply({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [{ op: 'explode' }] }))).toMatchObject({ kind: 'failed', reason: 'InvalidResponse' });
    expect(classifyOutcome(status(204, ''))).toMatchObject({ kind: 'failed', reason: 'InvalidResponse' });
  });
  it('separates throttling, server errors and rejections, and keeps the body out of the message', () => {
    expect(classifyOutcome(status(429, 'slow down', { 'retry-after': '3' }))).toEqual({ kind: 'throttled', status: 429, retryAfterMs: 3000, message: 'HTTP 429 from the function (its body is in the router\'s log)', detail: 'slow down' });
    const failed = classifyOutcome(status(503, 'secret: hunter2'));
    expect(failed).toMatchObject({ kind: 'failed', reason: 'ServerError', detail: 'secret: hunter2' });
    expect(failed.kind === 'failed' && failed.message).not.toContain('hunter2');
    expect(classifyOutcome(status(400, '{"message":"bad"}'))).toMatchObject({ kind: 'rejected', status: 400 });
  });
  it('caps an unsigned 429 asking for weeks at the backoff maximum', () => {
    expect(classifyOutcome(status(429, '', { 'retry-after': String(14 * 86_400) }), { maxRetryAfterMs: 60_000 })).toMatchObject({ retryAfterMs: 60_000 });
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
