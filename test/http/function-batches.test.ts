// Batches through the three transports of the function runtime: one HTTP request carrying several
// ReconcileRequests (plain JSON and CloudEvents batch mode), each item answered on its own, a bad item
// answered with its own error while the others get their replies, and a malformed batch refused whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.ts';
import { encodeBatchRequest, splitBatchReply, type BatchFormat } from '../../lib/contract/batch.ts';
import { exampleFunction, expectedLabelPatch, MISBEHAVE_LABEL, podRequest } from './example-function.ts';
import { threeTransports } from './three-transports.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const { transports, start, close } = threeTransports(exampleFunction, { logger, bodyLimitBytes: 1024 * 1024 });

beforeAll(start);
afterAll(close);

const item = (reconcileId: string, labels: Record<string, string> = {}) => ({ request: { ...podRequest({ reconcileId, labels }), reconcileId } });
const mixed = [
  item('good-1'),
  item('throws', { [MISBEHAVE_LABEL]: 'throw' }),
  { request: { ...podRequest({ reconcileId: 'no-object' }), reconcileId: 'no-object', object: undefined as never } },
  item('bad-reply', { [MISBEHAVE_LABEL]: 'invalid-reply' }),
  item('good-2'),
];
const ids = mixed.map((i) => i.request.reconcileId);

describe.each(transports)('%s', (_name, send) => {
  it.each(['json', 'cloudevents'] as BatchFormat[])('answers a %s batch item by item: a bad item gets its own error, the others their replies', async (format) => {
    const { contentType, body } = encodeBatchRequest(format, mixed, '/kubeloop/router/loops/example');
    const answer = await send('POST', '/', { 'content-type': contentType }, body);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toContain(format === 'json' ? 'application/json' : 'application/cloudevents-batch+json');
    const split = splitBatchReply(format, ids, JSON.parse(answer.body));
    if (!(split instanceof Map)) throw new Error(split.notBatch);
    for (const good of ['good-1', 'good-2']) {
      const outcome = split.get(good);
      expect(outcome?.kind).toBe('response');
      expect((outcome as { value: { actions: Array<{ patch?: unknown }> } }).value.actions[0]?.patch).toEqual(expectedLabelPatch);
    }
    expect(split.get('throws')).toMatchObject({ kind: 'error', error: { statusCode: 500, code: 'FunctionError', message: expect.stringMatching(/threw: cannot reconcile/) } });
    expect(split.get('no-object')).toMatchObject({ kind: 'error', error: { statusCode: 400, code: 'InvalidRequest' } });
    expect(split.get('bad-reply')).toMatchObject({ kind: 'error', error: { statusCode: 500, code: 'InvalidResponse' } });
  });

  it('checks each CloudEvent of a batch: an event of the wrong type is that item\'s 400', async () => {
    const events = [
      { specversion: '1.0', id: 'a', source: '/x', type: 'dev.kubeloop.reconcile.v1', data: podRequest({ reconcileId: 'a' }) },
      { specversion: '1.0', id: 'b', source: '/x', type: 'com.example.other', data: podRequest({ reconcileId: 'b' }) },
    ];
    const answer = await send('POST', '/', { 'content-type': 'application/cloudevents-batch+json' }, JSON.stringify(events));
    expect(answer.status).toBe(200);
    const split = splitBatchReply('cloudevents', ['a', 'b'], JSON.parse(answer.body)) as Map<string, unknown>;
    expect(split.get('a')).toMatchObject({ kind: 'response' });
    expect(split.get('b')).toMatchObject({ kind: 'error', error: { statusCode: 400, code: 'InvalidCloudEvent', message: expect.stringMatching(/com.example.other/) } });
  });

  it.each([
    ['a JSON batch with two items of one id', 'application/json', JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileBatchRequest', items: [podRequest({ reconcileId: 'x' }), podRequest({ reconcileId: 'x' })] }), 'InvalidRequest', /appear twice/],
    ['a JSON batch item without a reconcileId', 'application/json', JSON.stringify({ kind: 'ReconcileBatchRequest', items: [podRequest()] }), 'InvalidRequest', /no reconcileId/],
    ['a JSON batch without items', 'application/json', JSON.stringify({ kind: 'ReconcileBatchRequest', items: [] }), 'InvalidRequest', /no items/],
    ['a CloudEvents batch that is an object', 'application/cloudevents-batch+json', JSON.stringify({ id: 'a' }), 'InvalidCloudEvent', /JSON array/],
    ['a CloudEvents batch that is not JSON', 'application/cloudevents-batch+json', '[{', 'InvalidCloudEvent', /not JSON/],
    ['a batch of 65 items', 'application/cloudevents-batch+json', encodeBatchRequest('cloudevents', Array.from({ length: 65 }, (_, i) => item(`i${i}`)), '/x').body, 'InvalidCloudEvent', /at most 64/],
  ])('refuses %s as a whole with 400', async (_case, contentType, body, code, message) => {
    const answer = await send('POST', '/', { 'content-type': contentType }, body);
    expect(answer.status).toBe(400);
    const error = JSON.parse(answer.body) as { code: string; message: string };
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });
});
