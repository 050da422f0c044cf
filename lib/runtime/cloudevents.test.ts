import { describe, expect, it } from 'vitest';
import { decodeReconcileEvent, encodeResponseEvent } from './cloudevents.ts';

const binaryHeaders = { 'content-type': 'application/json', 'ce-specversion': '1.0', 'ce-id': 'e1', 'ce-source': '/router', 'ce-type': 'dev.kubeloop.reconcile.v1' };
const structured = (event: Record<string, unknown>) =>
  decodeReconcileEvent({ 'content-type': 'application/cloudevents+json' }, JSON.stringify({ specversion: '1.0', id: 'e1', source: '/router', type: 'dev.kubeloop.reconcile.v1', ...event }));

describe('decodeReconcileEvent', () => {
  it('returns the data of a binary-mode event', () => {
    expect(decodeReconcileEvent(binaryHeaders, '{"kind":"ReconcileRequest"}')).toEqual({ ok: true, data: { kind: 'ReconcileRequest' }, id: 'e1' });
  });

  it('returns the data of a structured-mode event', () => {
    expect(structured({ datacontenttype: 'application/json', data: { a: 1 } })).toEqual({ ok: true, data: { a: 1 }, id: 'e1' });
  });

  it.each([
    [{ specversion: '0.3' }, /specversion "0.3" is not supported/],
    [{ type: 'dev.kubeloop.reconcile.v2' }, /type "dev.kubeloop.reconcile.v2" is not accepted; want "dev.kubeloop.reconcile.v1"/],
    [{ id: '' }, /attribute "id" is missing/],
    [{ datacontenttype: 'application/xml', data: '<a/>' }, /datacontenttype "application\/xml" is not supported/],
    [{ data: undefined }, /has no data/],
    [{ source: undefined }, /attribute "source" is missing/],
  ])('rejects %j with a message naming the problem', (override, message) => {
    const result = structured({ data: { a: 1 }, ...override });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(message);
  });
});

it('rejects a binary-mode event without ce-id instead of inventing one', () => {
  const { 'ce-id': _id, ...headers } = binaryHeaders;
  expect(decodeReconcileEvent(headers, '{}')).toEqual({ ok: false, message: 'CloudEvent attribute "id" is missing' });
});

it.each([
  ['a batch', { 'content-type': 'application/cloudevents+json' }, '[]', /batches are not supported/],
  ['base64 data', { 'content-type': 'application/cloudevents+json' }, JSON.stringify({ specversion: '1.0', id: '1', source: '/r', type: 'dev.kubeloop.reconcile.v1', data_base64: 'e30=' }), /data_base64 is not supported/],
  ['a binary-mode body that is not JSON', binaryHeaders, '{nope', /its data is not JSON/],
  ['a binary-mode event without a body', binaryHeaders, '', /has no data/],
])('rejects %s with a message', (_case, headers, body, message) => {
  const result = decodeReconcileEvent(headers, body);
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.message).toMatch(message);
});

describe('encodeResponseEvent', () => {
  it('answers in binary mode with ce-* headers and the response as the body', () => {
    const out = encodeResponseEvent('binary', 'podset', 'rec-1', { actions: [] });
    expect(out.headers).toMatchObject({ 'ce-type': 'dev.kubeloop.reconcile.response.v1', 'ce-id': 'rec-1', 'ce-source': '/kubeloop/functions/podset' });
    expect(JSON.parse(out.body)).toEqual({ actions: [] });
  });

  it('answers in structured mode with the response as data', () => {
    const out = encodeResponseEvent('structured', 'podset', 'rec-1', { actions: [] });
    expect(out.headers['content-type']).toContain('application/cloudevents+json');
    expect(JSON.parse(out.body)).toMatchObject({ type: 'dev.kubeloop.reconcile.response.v1', id: 'rec-1', data: { actions: [] } });
  });
});
