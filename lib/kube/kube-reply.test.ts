import { describe, expect, it } from 'vitest';
import type { Dispatcher } from 'undici';
import { apiError } from './kube-api-error.ts';
import { replyBytes, replyErrorText } from './kube-reply.ts';
import { status } from '../../test/support/protobuf-watch-frames.ts';

/** An undici answer of `body` with `contentType`. */
function reply(statusCode: number, contentType: string, body: Uint8Array | string): Dispatcher.ResponseData {
  const bytes = Buffer.from(body);
  return { statusCode, headers: { 'content-type': contentType }, body: { text: async () => bytes.toString('utf8'), arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) } } as unknown as Dispatcher.ResponseData;
}

const request = { method: 'GET', path: '/api/v1/configmaps' };
const GONE = { status: 'Failure', message: 'The provided continue parameter is too old', reason: 'Expired', code: 410 };

describe('replyErrorText', () => {
  it('reads a Status in protobuf as the same KubeApiError its JSON gives', async () => {
    const fromProtobuf = apiError(request, { statusCode: 410, headers: {} }, await replyErrorText(reply(410, 'application/vnd.kubernetes.protobuf', status(GONE))));
    const fromJson = apiError(request, { statusCode: 410, headers: {} }, await replyErrorText(reply(410, 'application/json', JSON.stringify({ kind: 'Status', apiVersion: 'v1', ...GONE }))));
    expect(fromProtobuf).toMatchObject({ statusCode: 410, reason: 'Expired', message: fromJson.message });
  });

  it('keeps a body that is not a Status as it came (a proxy\'s page), protobuf said or not', async () => {
    expect(await replyErrorText(reply(502, 'text/html', '<h1>bad gateway</h1>'))).toBe('<h1>bad gateway</h1>');
    expect(await replyErrorText(reply(502, 'application/vnd.kubernetes.protobuf', 'not protobuf'))).toBe('not protobuf');
  });
});

describe('replyBytes', () => {
  it('gives the body\'s bytes unchanged and the media type the server named', async () => {
    const body = status(GONE);
    const { bytes, contentType } = await replyBytes(reply(200, 'application/vnd.kubernetes.protobuf', body));
    expect([Buffer.compare(bytes, Buffer.from(body)), contentType]).toEqual([0, 'application/vnd.kubernetes.protobuf']);
  });
});
