// The same requests through the three transports of the function runtime (fastify on a real socket,
// the Web fetch handler, the Node handler on a real socket) get the same status, headers and body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.ts';
import { exampleFunction, expectedLabelPatch, MISBEHAVE_LABEL, podRequest } from './example-function.ts';
import { threeTransports, type Answer } from './three-transports.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const LIMIT = 64 * 1024;
const { transports, start, close } = threeTransports(exampleFunction, { logger, bodyLimitBytes: LIMIT });

beforeAll(start);
afterAll(close);

const JSON_HEADERS = { 'content-type': 'application/json' };
const errorOf = (answer: Answer) => JSON.parse(answer.body) as { statusCode: number; code: string; message: string; reconcileId: string };

describe.each(transports)('%s', (name, send) => {
  it('answers a valid request on / and /reconcile with the function reply and the reconcile id header', async () => {
    for (const path of ['/', '/reconcile']) {
      const answer = await send('POST', path, JSON_HEADERS, JSON.stringify(podRequest({ reconcileId: 'rec-7' })));
      expect(answer.status).toBe(200);
      expect(answer.headers['x-kubeloop-reconcile-id']).toBe('rec-7');
      const body = JSON.parse(answer.body) as { actions: Array<{ op: string; patch?: unknown }> };
      expect(body.actions.map((a) => a.op)).toEqual(['patch', 'event']);
      expect(body.actions[0]?.patch).toEqual(expectedLabelPatch);
    }
  });

  it('generates a reconcile id when the request has none', async () => {
    const answer = await send('POST', '/', JSON_HEADERS, JSON.stringify(podRequest()));
    expect(answer.headers['x-kubeloop-reconcile-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('accepts a binary-mode CloudEvent and replies with a binary-mode response event', async () => {
    const headers = { ...JSON_HEADERS, 'ce-specversion': '1.0', 'ce-id': 'evt-1', 'ce-source': '/kubeloop/router', 'ce-type': 'dev.kubeloop.reconcile.v1' };
    const answer = await send('POST', '/', headers, JSON.stringify(podRequest({ reconcileId: 'rec-ce' })));
    expect(answer.status).toBe(200);
    expect(answer.headers['ce-type']).toBe('dev.kubeloop.reconcile.response.v1');
    expect(answer.headers['ce-id']).toBe('rec-ce');
    expect(answer.headers['ce-source']).toBe('/kubeloop/functions/example-labeller');
    expect(answer.headers['content-type']).toContain('application/json');
    expect((JSON.parse(answer.body) as { kind: string }).kind).toBe('ReconcileResponse');
  });

  it('accepts a structured-mode CloudEvent and replies in structured mode', async () => {
    const event = { specversion: '1.0', id: 'evt-2', source: '/kubeloop/router', type: 'dev.kubeloop.reconcile.v1', datacontenttype: 'application/json', data: podRequest() };
    const answer = await send('POST', '/', { 'content-type': 'application/cloudevents+json' }, JSON.stringify(event));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toContain('application/cloudevents+json');
    const reply = JSON.parse(answer.body) as { type: string; data: { actions: unknown[] } };
    expect(reply.type).toBe('dev.kubeloop.reconcile.response.v1');
    expect(reply.data.actions).toHaveLength(2);
  });

  it.each([
    ['malformed JSON', JSON_HEADERS, '{"apiVersion": ', 400, 'InvalidJSON', /not valid JSON/],
    ['an empty body', JSON_HEADERS, '', 400, 'InvalidJSON', /empty/],
    ['a missing object', JSON_HEADERS, JSON.stringify({ ...podRequest(), object: undefined }), 400, 'InvalidRequest', /must have required property 'object'/],
    ['an unknown apiVersion', JSON_HEADERS, JSON.stringify({ ...podRequest(), apiVersion: 'kubeloop.dev/v9' }), 400, 'UnsupportedApiVersion', /"kubeloop.dev\/v9" is not supported/],
    ['a wrong content type', { 'content-type': 'text/plain' }, JSON.stringify(podRequest()), 415, 'UnsupportedMediaType', /content type "text\/plain" is not supported/],
    ['a CloudEvent of the wrong type', { ...JSON_HEADERS, 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': '/x', 'ce-type': 'com.example.other' }, JSON.stringify(podRequest()), 400, 'InvalidCloudEvent', /type "com.example.other" is not accepted/],
    ['a structured CloudEvent without a source', { 'content-type': 'application/cloudevents+json' }, JSON.stringify({ specversion: '1.0', id: '1', type: 'dev.kubeloop.reconcile.v1', data: podRequest() }), 400, 'InvalidCloudEvent', /"source" is missing/],
    ['a body over the limit', JSON_HEADERS, JSON.stringify({ ...podRequest(), pad: 'x'.repeat(LIMIT) }), 413, 'PayloadTooLarge', /larger than the limit of 65536 bytes/],
    ['an exception inside the function', JSON_HEADERS, JSON.stringify(podRequest({ labels: { [MISBEHAVE_LABEL]: 'throw' }, reconcileId: 'rec-boom' })), 500, 'FunctionError', /threw: cannot reconcile this object/],
    ['an invalid function reply', JSON_HEADERS, JSON.stringify(podRequest({ labels: { [MISBEHAVE_LABEL]: 'invalid-reply' } })), 500, 'InvalidResponse', /invalid ReconcileResponse: \/actions\/0/],
    ['a function returning a Promise', JSON_HEADERS, JSON.stringify(podRequest({ labels: { [MISBEHAVE_LABEL]: 'promise' } })), 500, 'InvalidResponse', /returned a Promise/],
  ] as const)('rejects %s with a clear error and keeps serving', async (_case, headers, body, status, code, message) => {
    const answer = await send('POST', '/', { ...headers }, body);
    expect(answer.status).toBe(status);
    const error = errorOf(answer);
    expect(error).toMatchObject({ statusCode: status, code });
    expect(error.message).toMatch(message);
    expect(error.reconcileId).toBe(answer.headers['x-kubeloop-reconcile-id']);
    if (code === 'FunctionError') expect(error.reconcileId).toBe('rec-boom');
    const next = await send('POST', '/', JSON_HEADERS, JSON.stringify(podRequest()));
    expect(next.status).toBe(200);
  });

  it('answers health, readiness and metrics, and 404 elsewhere', async () => {
    expect((await send('GET', '/healthz', {})).status).toBe(200);
    expect((await send('GET', '/readyz', {})).status).toBe(200);
    const metrics = await send('GET', '/metrics', {});
    if (name === 'fetch handler') {
      // prom-client needs Node; FaaS platforms count requests themselves.
      expect(metrics.status).toBe(404);
    } else {
      expect(metrics.body).toMatch(/kubeloop_function_requests_total\{function="example-labeller",code="200"\} \d+/);
      expect(metrics.body).toMatch(/kubeloop_function_errors_total\{function="example-labeller",code="InvalidJSON"\} \d+/);
      expect(metrics.body).toContain('kubeloop_function_request_duration_seconds_bucket{le="0.001",function="example-labeller"}');
    }
    const wrongMethod = await send('GET', '/reconcile', {});
    expect(wrongMethod.status).toBe(405);
    expect(errorOf(wrongMethod).message).toBe('GET /reconcile is not allowed; POST a ReconcileRequest');
    const missing = await send('GET', '/nope', {});
    expect(missing.status).toBe(404);
    expect(errorOf(missing).message).toBe('no route GET /nope');
  });
});
