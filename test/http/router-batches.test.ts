// The router's batch invoker against real functions over HTTP: a signed CloudEvents batch is answered
// item by item by the runtime (one signature per request, both ways), a bad item fails alone, a reply
// that leaves an item out fails that item only, a function that does not speak batches is recognised, and
// a batch refused as too large (413) is sent again in smaller batches, every item answered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, type ServedFunction } from '../../lib/runtime/index.ts';
import { generateSigningSecret, parseSigningSecrets } from '../../lib/signing/webhook-signature.ts';
import { encodeBatchReply, decodeBatchRequest } from '../../lib/contract/batch.ts';
import { createHttpInvoker, type BatchInvokeItem, type BatchOutcome, type DispatchResult } from '../../router/reconcile/dispatch.ts';
import { CallBatcher } from '../../router/reconcile/call-batcher.ts';
import { exampleFunction, expectedLabelPatch, MISBEHAVE_LABEL, podRequest } from './example-function.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const SECRET = generateSigningSecret();
const invoker = createHttpInvoker();
let signed: ServedFunction;
/** The same function taking bodies of at most 4 KiB: one pod's request fits, a batch of four does not. */
let small: ServedFunction;
let raw: Server;
let rawBase = '';
/** What the raw server answers: a batch reply that leaves the last item out, or a single reply (no batches). */
let rawMode: 'drop-last' | 'single' = 'drop-last';
let requests = 0;

beforeAll(async () => {
  signed = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logger, signingSecret: SECRET });
  small = await serveFunction(exampleFunction, { port: 0, host: '127.0.0.1', logger, bodyLimitBytes: 4096 });
  raw = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      requests++;
      if (rawMode === 'single') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] }));
        return;
      }
      const decoded = decodeBatchRequest('cloudevents', JSON.parse(body));
      if (!decoded.ok) return void res.writeHead(400).end();
      const reply = encodeBatchReply('cloudevents', 'raw', decoded.items.slice(0, -1).map((i) => ({ id: i.id, response: { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] } })));
      res.writeHead(200, { 'content-type': reply.contentType }).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  rawBase = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await invoker.close();
  await signed.close();
  await small.close();
  await new Promise((resolve) => raw.close(resolve));
});

const item = (reconcileId: string, labels: Record<string, string> = {}): BatchInvokeItem => ({ request: { ...podRequest({ reconcileId, labels }), reconcileId }, headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
const kinds = (results: BatchOutcome) => (Array.isArray(results) ? results.map((r) => (r.kind === 'failed' ? `failed ${r.reason}` : r.kind)) : results);

describe('batched calls over HTTP', () => {
  it('learns from a single call\'s reply that the runtime answers batches of up to 64, and from a plain function that it does not', async () => {
    const single = await invoker({ ...podRequest({ reconcileId: 'one' }) }, { url: `${signed.url}/`, timeoutMs: 5000, signingKey: parseSigningSecrets(SECRET) });
    expect(single).toMatchObject({ kind: 'ok', batchMax: 64 });
    rawMode = 'single';
    const plain = await invoker({ ...podRequest({ reconcileId: 'two' }) }, { url: rawBase, timeoutMs: 5000 });
    expect(plain.kind).toBe('ok');
    expect(plain).not.toHaveProperty('batchMax');
  });

  it('sends a signed batch and gets each item its own verified answer; a throwing item fails alone', async () => {
    const results = await invoker.batch!([item('a'), item('boom', { [MISBEHAVE_LABEL]: 'throw' }), item('b')], { url: `${signed.url}/`, timeoutMs: 5000, signingKey: parseSigningSecrets(SECRET) });
    expect(kinds(results)).toEqual(['ok', 'failed ServerError', 'ok']);
    const first = (results as DispatchResult[])[0];
    expect(first?.kind === 'ok' && first.response.actions[0]).toMatchObject({ op: 'patch', patch: expectedLabelPatch });
    const boom = (results as DispatchResult[])[1];
    expect(boom?.kind === 'failed' && boom.detail).toMatch(/FunctionError: function example-labeller threw/);
  });

  it('refuses every item of a batch signed with the wrong key: the function refused the request', async () => {
    const results = await invoker.batch!([item('a'), item('b')], { url: `${signed.url}/`, timeoutMs: 5000, signingKey: parseSigningSecrets(generateSigningSecret()) });
    expect(kinds(results)).toEqual(['rejected', 'rejected']);
  });

  it('makes an item the reply left out that item\'s InvalidResponse, the others applied', async () => {
    rawMode = 'drop-last';
    const results = await invoker.batch!([item('a'), item('b'), item('c')], { url: rawBase, timeoutMs: 5000 });
    expect(kinds(results)).toEqual(['ok', 'ok', 'failed InvalidResponse']);
    expect((results as DispatchResult[])[2]).toMatchObject({ message: expect.stringMatching(/no answer for this item/) });
  });

  it('recognises a function that answers a batch as a single call', async () => {
    rawMode = 'single';
    const before = requests;
    expect(await invoker.batch!([item('a'), item('b')], { url: rawBase, timeoutMs: 5000 })).toEqual({ notBatch: 'the reply is not a CloudEvents batch (a JSON array of events)' });
    expect(requests - before).toBe(1);
  });

  it('sends the calls of a batch the function refused as too large (413) again in smaller batches, every one answered', async () => {
    const padded = (id: string) => ({ ...podRequest({ reconcileId: id, labels: { pad: 'x'.repeat(1200) } }), reconcileId: id });
    const url = `${small.url}/`;
    expect(await invoker.batch!(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => ({ request: padded(id) })), { url, timeoutMs: 5000 })).toEqual({ tooLarge: 'HTTP 413 to a batch of 6' });
    const sizes: number[] = [];
    const caps: number[] = [];
    const batcher = new CallBatcher(invoker, invoker.batch!, { maxSize: 16, onBatch: (size) => sizes.push(size), onTooLarge: (_url, _reason, cap) => caps.push(cap) });
    expect((await batcher.invoke(padded('first'), { url, timeoutMs: 5000 })).kind).toBe('ok');
    const results = await Promise.all(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((id) => batcher.invoke(padded(id), { url, timeoutMs: 5000 })));
    expect(results.map((r) => r.kind)).toEqual(Array(8).fill('ok'));
    // 8 refused, then 4s refused, then two fit in 4 KiB: the 8 calls go as four batches of 2, the only ones taken.
    expect(caps[0]).toBe(4);
    expect(Math.min(...caps)).toBe(2);
    expect(sizes).toEqual([2, 2, 2, 2]);
  });
});
