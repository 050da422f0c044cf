// The node:http server `kubeloop function` (every function image) runs answers byte for byte as the fastify
// server does: the same raw requests, on real sockets, to both (methods, paths, limits, parser errors, metrics
// formats), and the same readiness and draining on shutdown.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as undiciRequest } from 'undici';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, serveNodeFunction, type AnyFunctionDefinition, type ServedFunction, type ServedNodeFunction } from '../../lib/runtime/index.ts';
import { shutdown } from '../../lib/server/shutdown.ts';
import { allow, defineAdmission, defineFunction, deny, respond } from '../../lib/sdk/index.ts';
import { exampleFunction, podRequest } from './example-function.ts';
import { answers, expectAlike, raw, rawRequest } from './raw-http.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const LIMIT = 4096;

/** The same function on both servers, for the tests of one describe block. */
function bothServers(definition: AnyFunctionDefinition): { fastify: () => string; image: () => string } {
  let fastify: ServedFunction | undefined;
  let image: ServedNodeFunction | undefined;
  beforeAll(async () => {
    fastify = await serveFunction(definition, { port: 0, host: '127.0.0.1', logger, bodyLimitBytes: LIMIT });
    image = await serveNodeFunction(definition, { port: 0, host: '127.0.0.1', logger, bodyLimitBytes: LIMIT });
  });
  afterAll(async () => {
    await fastify?.close();
    await image?.close();
  });
  return { fastify: () => fastify!.url, image: () => image!.url };
}

/** Both servers answer `text` with the same bytes (but for the date and generated ids). */
const bothAlike = (urls: ReturnType<typeof bothServers>, text: string) => expectAlike(urls.fastify(), urls.image(), text);

const body = JSON.stringify(podRequest({ reconcileId: 'rec-1' }));
const request = (method: string, path: string, headers = '', payload?: string) => rawRequest('fn', method, path, headers, payload);
const JSON_TYPE = 'Content-Type: application/json\r\n';

describe('the node:http function server against the fastify one', () => {
  const urls = bothServers(exampleFunction);
  it.each([
    ['a reconcile on /', request('POST', '/', JSON_TYPE, body)],
    ['a reconcile on /reconcile with a query', request('POST', '/reconcile?x=1', JSON_TYPE, body)],
    ['a percent-encoded path', request('POST', '/reconcil%65', JSON_TYPE, body)],
    ['a bad percent escape', request('GET', '/%zz')],
    ['a trailing slash', request('POST', '/reconcile/', JSON_TYPE, body)],
    ['malformed JSON', request('POST', '/', `${JSON_TYPE}x-kubeloop-reconcile-id: rec-2\r\n`, '{"apiVersion": ')],
    ['no content type', request('POST', '/', 'x-kubeloop-reconcile-id: rec-3\r\n', body)],
    ['an empty POST', request('POST', '/', 'x-kubeloop-reconcile-id: rec-4\r\n', '')],
    ['a body announced over the limit', request('POST', '/', `${JSON_TYPE}x-kubeloop-reconcile-id: rec-5\r\n`, 'x'.repeat(LIMIT + 1))],
    ['a chunked body over the limit', `POST / HTTP/1.1\r\nHost: fn\r\nConnection: close\r\n${JSON_TYPE}x-kubeloop-reconcile-id: rec-6\r\nTransfer-Encoding: chunked\r\n\r\n${(LIMIT + 1).toString(16)}\r\n${'x'.repeat(LIMIT + 1)}\r\n0\r\n\r\n`],
    ['GET on a function path', request('GET', '/reconcile')],
    ['HEAD on a function path', request('HEAD', '/')],
    ['OPTIONS on a function path', request('OPTIONS', '/')],
    ['DELETE on a function path', request('DELETE', '/reconcile')],
    ['TRACE on a function path', request('TRACE', '/')],
    ['an unknown path', request('GET', '/nope?a=b')],
    ['HEAD on an unknown path', request('HEAD', '/nope')],
    ['GET /healthz', request('GET', '/healthz')],
    ['HEAD /healthz', request('HEAD', '/healthz')],
    ['GET /readyz', request('GET', '/readyz')],
    ['POST /healthz', request('POST', '/healthz', JSON_TYPE, '{}')],
    ['a malformed request line', 'GARBAGE\r\n\r\n'],
    ['headers over the size limit', `GET /healthz HTTP/1.1\r\nHost: fn\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ])('answers %s alike', async (_case, text) => bothAlike(urls, text));

  it.each([
    ['Prometheus text', '', 'text/plain; version=0.0.4; charset=utf-8'],
    ['OpenMetrics when asked for', 'Accept: application/openmetrics-text\r\n', 'application/openmetrics-text; version=1.0.0; charset=utf-8'],
  ])('serves /metrics as %s', async (_case, accept, type) => {
    for (const url of [urls.fastify(), urls.image()]) {
      const answer = await raw(url, request('GET', '/metrics', accept));
      expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
      expect(answer.toLowerCase()).toContain(`content-type: ${type}`);
      expect(answer).toContain('kubeloop_function_requests_total{function="example-labeller",code="200"}');
    }
  });
});

const requireTeam = defineAdmission({
  name: 'require-team',
  type: 'validating',
  admit: (review) => (review.object?.metadata?.labels?.team ? allow() : deny('pods need a "team" label')),
});
const admissionBody = JSON.stringify({
  apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionRequest', hook: 'require-team', uid: '0f9e3c52-6e7a-4d1e-9d0c-6c6a7f0f1a01', operation: 'CREATE',
  requestKind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: 'shop',
  object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' } }, userInfo: { username: 'alice' }, dryRun: false, context: {}, now: '2026-11-29T10:00:00Z',
});

describe('an admission function on the node:http server against the fastify one', () => {
  const urls = bothServers(requireTeam);
  it.each([
    ['an admission request on /admit', request('POST', '/admit', JSON_TYPE, admissionBody)],
    ['a CloudEvent, which admission refuses', request('POST', '/', `${JSON_TYPE}ce-specversion: 1.0\r\nce-id: 1\r\nce-source: /x\r\nce-type: t\r\nx-kubeloop-reconcile-id: rec-7\r\n`, admissionBody)],
    ['GET on /admit', request('GET', '/admit')],
    ['POST on /reconcile, which an admission function does not serve', request('POST', '/reconcile', JSON_TYPE, admissionBody)],
  ])('answers %s alike', async (_case, text) => bothAlike(urls, text));
});

const slowFunction = defineFunction({ name: 'slow', reconcile: () => respond([]) });
const reconcileBody = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'ReconcileRequest', loop: 'l', trigger: { type: 'ADDED' }, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'd' } }, children: {}, now: '2026-11-29T10:00:00Z' });

describe.each([
  ['fastify server', serveFunction],
  ['node:http server (images)', serveNodeFunction],
] as const)('%s on shutdown', (_name, serve) => {
  it('fails readiness, finishes the call in flight, answers its next request 503 with the connection closed, then refuses connections', async () => {
    const served = await serve(slowFunction, { port: 0, host: '127.0.0.1', logger });
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    const reader = answers(socket);
    // Headers first, with Expect: 100-continue: the 100 says the server has the request in hand, body still to come.
    socket.write(`POST / HTTP/1.1\r\nHost: fn\r\n${JSON_TYPE}Expect: 100-continue\r\nContent-Length: ${reconcileBody.length}\r\n\r\n`);
    expect(await reader.next(/^HTTP\/1\.1 100 Continue\r\n\r\n/)).toBeTruthy();

    served.server.beginClosing();
    const readyz = await undiciRequest(`${served.url}/readyz`, { reset: true });
    expect(readyz.statusCode).toBe(503);
    expect(await readyz.body.json()).toEqual({ status: 'not ready' });

    const closed = shutdown(served.server, { timeoutMs: 5000 });
    socket.write(reconcileBody);
    expect(await reader.next(/^HTTP\/1\.1 200 OK[\s\S]*?"kind":"ReconcileResponse"[^\r]*?\}$/)).toMatch(/connection: keep-alive/i);
    socket.write('GET /healthz HTTP/1.1\r\nHost: fn\r\n\r\n');
    const refused = await reader.next(/^HTTP\/1\.1 503 [\s\S]*\}$/);
    expect(refused).toMatch(/connection: close/i);
    expect(refused).toContain('"statusCode":503');
    await reader.closed;
    await closed;
    await expect(undiciRequest(`${served.url}/healthz`)).rejects.toThrow();
  });
});
