// What a function's reply can make the router do, over real HTTP: a 64 MiB chunked reply from another
// process is cut off at the limit without being buffered whole, a reply of 10,000 actions is refused,
// and with a signing key a reply without a valid signature for this very request is refused.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReconcileRequest } from '../../lib/contract/types.ts';
import { directionKeys, generateSigningSecret, parseSigningSecret, signatureHeaders, signReply } from '../../lib/signing/webhook-signature.ts';
import { createHttpInvoker } from '../../router/reconcile/dispatch.ts';
import { startFloodServer, type FloodServer } from './flood-server.ts';

const request = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', reconcileId: 'r1', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'n' } }, children: {}, now: new Date().toISOString() } as ReconcileRequest;
const MiB = 1024 * 1024;

describe('reply bounds', () => {
  let flood: FloodServer;
  beforeAll(async () => void (flood = await startFloodServer()));
  afterAll(() => flood.close());

  it('cuts a 64 MiB chunked reply off at the limit, with router memory bounded', async () => {
    const invoker = createHttpInvoker({ maxResponseBytes: 4 * MiB });
    const rssBefore = process.memoryUsage().rss;
    const sentReport = flood.nextFloodSent();
    const result = await invoker(request, { url: `${flood.base}/`, timeoutMs: 30_000 });
    const rssGrowth = process.memoryUsage().rss - rssBefore;
    expect(result).toMatchObject({ kind: 'failed', reason: 'InvalidResponse', message: `reply is larger than ${4 * MiB} bytes; cut off at the limit` });
    // The router stopped reading: the function could not push the whole 64 MiB through the socket.
    expect(await sentReport).toBeLessThan(32 * MiB);
    expect(rssGrowth).toBeLessThan(48 * MiB);
    await invoker.close();
  });
});

describe('actions per reply and signed replies', () => {
  let server: Server;
  let base = '';
  const key = parseSigningSecret(generateSigningSecret());
  const otherKey = parseSigningSecret(generateSigningSecret());
  const seen: Array<Record<string, string | string[] | undefined>> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      const count = req.url === '/many' ? 10_000 : req.url === '/limit' ? 1000 : 1;
      const actions = Array.from({ length: count }, (_, i) => ({ op: 'event', type: 'Normal', reason: 'Seen', message: `n${i}` }));
      const body = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions });
      const requestId = String(req.headers['webhook-id']);
      const signed =
        req.url === '/signed' ? signReply(key, 'loop/l', requestId, body)
        : req.url === '/wrong-key' ? signReply(otherKey, 'loop/l', requestId, body)
        : req.url === '/other-request' ? signReply(key, 'loop/l', 'msg_an-earlier-request', body)
        : req.url === '/stale' ? signReply(key, 'loop/l', requestId, body, { nowMs: Date.now() - 10 * 60_000 })
        : req.url === '/secret-itself' ? signatureHeaders(key, body, { id: requestId })
        : req.url === '/other-audience' ? signReply(key, 'loop/other', requestId, body)
        : req.url === '/request-key' ? signatureHeaders(directionKeys(key, 'request', 'loop/l'), body, { id: requestId })
        : {};
      res.writeHead(200, { 'content-type': 'application/json', ...signed }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => void server.close());
  const invoker = createHttpInvoker();
  afterAll(() => invoker.close());

  it('refuses a reply with 10,000 actions as InvalidResponse and accepts one at the limit', async () => {
    expect(await invoker(request, { url: `${base}/many`, timeoutMs: 5000 })).toMatchObject({
      kind: 'failed',
      reason: 'InvalidResponse',
      message: 'reply has 10000 actions; at most 1000 are accepted per reply (nothing was applied)',
    });
    expect(await invoker(request, { url: `${base}/limit`, timeoutMs: 5000 })).toMatchObject({ kind: 'ok' });
    const strict = createHttpInvoker({ maxActionsPerReply: 10 });
    expect(await strict(request, { url: `${base}/limit`, timeoutMs: 5000 })).toMatchObject({ reason: 'InvalidResponse' });
    await strict.close();
  });

  it('signs requests and accepts a reply signed for the same webhook-id', async () => {
    const result = await invoker(request, { url: `${base}/signed`, timeoutMs: 5000, signingKey: [key] });
    expect(result.kind).toBe('ok');
    expect(seen.at(-1)?.['webhook-signature']).toMatch(/^v1,/);
  });

  it.each([
    ['unsigned', '/unsigned', /missing signature/],
    ['signed with another key', '/wrong-key', /no webhook-signature matches/],
    ['signed for another request (a replayed reply)', '/other-request', /signed for another webhook-id, not this request's msg_/],
    ['signed 10 minutes ago', '/stale', /stale or replayed/],
    ['signed with the secret itself, not the derived reply key', '/secret-itself', /no webhook-signature matches/],
    ['signed for another Loop (audience)', '/other-audience', /no webhook-signature matches/],
    ['signed with the request key (a request passed off as a reply)', '/request-key', /no webhook-signature matches/],
  ])('refuses a reply %s as InvalidSignature', async (_case, path, message) => {
    const result = await invoker(request, { url: `${base}${path}`, timeoutMs: 5000, signingKey: [key] });
    expect(result).toMatchObject({ kind: 'failed', reason: 'InvalidSignature', message: expect.stringMatching(message) });
  });

  it('sends no signature headers to a Loop without a key', async () => {
    await invoker(request, { url: `${base}/unsigned`, timeoutMs: 5000 });
    expect(seen.at(-1)?.['webhook-signature']).toBeUndefined();
  });
});
