import { describe, expect, it } from 'vitest';
import { decodeBatchRequest, encodeBatchReply, encodeBatchRequest, splitBatchReply, type BatchFormat } from './batch.ts';
import type { ReconcileRequest } from './types.ts';
import { contractAjv } from './artifacts.ts';
import { reconcileBatchRequestSchema, reconcileBatchResponseSchema } from './batch-schemas.ts';
import { reconcileRequestSchema, reconcileResponseSchema } from './schemas.ts';

const request = (reconcileId: string) => ({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', reconcileId, trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: reconcileId } }, children: {}, now: '2026-01-01T00:00:00Z' }) as ReconcileRequest & { reconcileId: string };
const response = { apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileResponse', actions: [] };

describe.each(['json', 'cloudevents'] as BatchFormat[])('%s batches', (format) => {
  it('round-trips: encoded requests decode to their ids, and a reply splits back by id', () => {
    const { body } = encodeBatchRequest(format, [{ request: request('a'), traceparent: '00-aa-bb-01' }, { request: request('b') }], '/src');
    const decoded = decodeBatchRequest(format, JSON.parse(body));
    if (!decoded.ok) throw new Error(decoded.message);
    expect(decoded.items.map((i) => i.id)).toEqual(['a', 'b']);
    if (format === 'cloudevents') expect(decoded.items[0]?.traceparent).toBe('00-aa-bb-01');
    const reply = encodeBatchReply(format, 'fn', [{ id: 'b', error: { statusCode: 500, code: 'FunctionError', message: 'boom' } }, { id: 'a', response }]);
    const split = splitBatchReply(format, ['a', 'b'], JSON.parse(reply.body));
    expect(split).toEqual(new Map([['a', { kind: 'response', value: response }], ['b', { kind: 'error', error: { statusCode: 500, code: 'FunctionError', message: 'boom' } }]]));
  });

  it('makes a missing or repeated answer that item\'s error alone, and ignores answers nobody asked for', () => {
    const reply = encodeBatchReply(format, 'fn', [{ id: 'a', response }, { id: 'b', response }, { id: 'b', response }, { id: 'z', response }]);
    const split = splitBatchReply(format, ['a', 'b', 'c'], JSON.parse(reply.body)) as Map<string, { kind: string; message?: string }>;
    expect(split.get('a')?.kind).toBe('response');
    expect(split.get('b')).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/answers this item 2 times/) });
    expect(split.get('c')).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/no answer for this item/) });
    expect(split.size).toBe(3);
  });

  it('says a reply that is not a batch reply at all is not one (a function that does not speak batches)', () => {
    expect(splitBatchReply(format, ['a'], response)).toHaveProperty('notBatch');
    expect(splitBatchReply(format, ['a'], null)).toHaveProperty('notBatch');
  });

  it('refuses an item error without a 4xx/5xx status', () => {
    const reply = encodeBatchReply(format, 'fn', [{ id: 'a', error: { statusCode: 200, code: 'X', message: '' } }]);
    expect((splitBatchReply(format, ['a'], JSON.parse(reply.body)) as Map<string, unknown>).get('a')).toMatchObject({ kind: 'invalid' });
  });
});

describe('decodeBatchRequest', () => {
  it('refuses another contract version of a JSON batch', () => {
    expect(decodeBatchRequest('json', { apiVersion: 'kubeloop.dev/v9', kind: 'ReconcileBatchRequest', items: [request('a')] })).toMatchObject({ ok: false, message: expect.stringMatching(/v9/) });
  });
});

describe('the published batch schemas (schemas/reconcile-batch-*.json)', () => {
  const ajv = contractAjv({ source: false });
  for (const schema of [reconcileRequestSchema, reconcileResponseSchema]) ajv.addSchema(schema);
  const requestValid = ajv.compile(reconcileBatchRequestSchema);
  const responseValid = ajv.compile(reconcileBatchResponseSchema);

  it('accept what the encoders write, and refuse an item without a reconcileId or an error without a status', () => {
    expect(requestValid(JSON.parse(encodeBatchRequest('json', [{ request: request('a') }, { request: request('b') }], '/s').body))).toBe(true);
    const { reconcileId: _id, ...anonymous } = request('c');
    expect(requestValid({ kind: 'ReconcileBatchRequest', items: [anonymous] })).toBe(false);
    expect(responseValid(JSON.parse(encodeBatchReply('json', 'fn', [{ id: 'a', response }, { id: 'b', error: { statusCode: 500, code: 'FunctionError', message: 'x' } }]).body))).toBe(true);
    expect(responseValid({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileBatchResponse', items: [{ reconcileId: 'a', error: { code: 'X', message: '' } }] })).toBe(false);
  });
});
