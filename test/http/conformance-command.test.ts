// `kubeloop conformance` over real HTTP: the TypeScript runtime passes every case (plain, signed, admission),
// and a deliberately broken function (wrong status codes, a reply event without its type, no signing, replies
// signed with the wrong derived key, signed refusals) fails exactly the cases it breaks, with exit code 1.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/commands/conformance.ts';
import { loadAnyFunction } from '../../functions/registry.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { serveFunction, toNodeHandler, type ServedFunction } from '../../lib/runtime/index.ts';
import { request } from 'undici';
import { requestMessageId } from '../../lib/signing/standard-webhooks.ts';
import { directionKeys, generateSigningSecret, parseSigningSecrets, signatureHeaders, verifyRequest } from '../../lib/signing/webhook-signature.ts';
import { captureCommand } from './capture-console.ts';
import { exampleFunction } from './example-function.ts';

const logger = createLogger({ name: 't', level: 'silent' });
const LIMIT = 64 * 1024;
const SECRET = generateSigningSecret();
const conformance = (argv: string[]) => captureCommand(run, argv);

/** A function that gets the transport wrong on purpose, on top of the real runtime for everything else. */
function brokenHandler(): (request: IncomingMessage, response: ServerResponse) => void {
  const real = toNodeHandler(exampleFunction, { logger, bodyLimitBytes: LIMIT });
  return (request, response) => {
    if (request.method === 'GET' && request.url === '/') return void response.writeHead(404).end('not here');
    if (request.headers['content-type'] === 'text/plain') return void response.writeHead(200, { 'content-type': 'text/plain' }).end('fine');
    const writeHead = response.writeHead.bind(response) as (status: number, headers?: Record<string, string>) => ServerResponse;
    // Drops the reply event's type: a binary-mode reply the router cannot recognise.
    response.writeHead = ((status: number, headers?: Record<string, string>) => {
      const { 'ce-type': _dropped, ...rest } = headers ?? {};
      return writeHead(status, rest);
    }) as typeof response.writeHead;
    real(request, response);
  };
}

let plain: ServedFunction;
let signed: ServedFunction;
let admission: ServedFunction;
let broken: Server;
let brokenUrl: string;

beforeAll(async () => {
  const options = { port: 0, host: '127.0.0.1', logger, bodyLimitBytes: LIMIT };
  plain = await serveFunction(exampleFunction, options);
  signed = await serveFunction(exampleFunction, { ...options, signingSecret: SECRET });
  admission = await serveFunction(await loadAnyFunction('require-label'), options);
  broken = createServer(brokenHandler());
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
  brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await Promise.all([plain.close(), signed.close(), admission.close(), new Promise((resolve) => broken.close(resolve))]);
});

describe('kubeloop conformance', () => {
  it('passes the TypeScript runtime on every transport case, skips signing without a secret, exits 0', async () => {
    const { code, output } = await conformance([plain.url, '--body-limit-bytes', String(LIMIT)]);
    expect(output).toMatch(/^PASS transport +413 for a body over the limit$/m);
    expect(output).toMatch(/^PASS cloudevents binary mode/m);
    expect(output).toMatch(/^cloudevents +CloudEvents batch: .* PASS +200, 3 items answered one by one \(advertises 64\)$/m);
    expect(output).toMatch(/^transport +plain JSON batch: .* PASS +200, 3 items answered one by one/m);
    expect(output).toMatch(/^SKIP signing +401 for an unsigned request, the refusal unsigned\n +signing is off/m);
    expect(output).toMatch(/GROUP +CASE +RESULT +DETAIL/);
    expect(output).toMatch(/16 passed, 0 failed, 10 skipped$/);
    expect(code).toBe(0);
  });

  it('with --signing-secret, checks the refusals and the signed reply, then replays --fixtures signed', async () => {
    const { code, output } = await conformance([signed.url, '--body-limit-bytes', String(LIMIT), '--signing-secret', SECRET, '--fixtures', 'test/fixtures/podset/no-action-when-converged.json']);
    for (const name of [
      '401 for an unsigned request, the refusal unsigned',
      '401 for a signature made with another key (forged)',
      '401 for a request signed 6 minutes ago (stale or replayed)',
      '401 for a request without x-kubeloop-audience',
      '401 for a request signed for another audience',
      '401 for a request signed with the reply key (a reply passed off as a request)',
      "401 for a request signed with the secret's own key, not the derived request key",
      'a signed request is answered with a reply signed with the reply key, for its webhook-id, fresh',
    ]) {
      expect(output).toContain(`PASS signing     ${name}`);
    }
    // The example function is not podset: its reply differs from the recording, and the diff is shown.
    expect(output).toMatch(/^FAIL fixture +no-action-when-converged\n +actions on/m);
    expect(output).toMatch(/26 passed, 1 failed, 0 skipped$/);
    expect(code).toBe(1);
  });

  it('signs for a namespaced Loop as loop/<namespace>/<name> when the fixture names its loopNamespace, and the runtime accepts it', async () => {
    const fixture = JSON.parse(readFileSync('test/fixtures/podset/no-action-when-converged.json', 'utf8')) as { request: Record<string, unknown> };
    fixture.request.loopNamespace = 'team-a';
    const file = join(mkdtempSync(join(tmpdir(), 'conformance-')), 'namespaced.json');
    writeFileSync(file, JSON.stringify(fixture));
    const { output } = await conformance([signed.url, '--body-limit-bytes', String(LIMIT), '--signing-secret', SECRET, '--fixtures', file]);
    expect(output).toContain('PASS signing     a signed request is answered with a reply signed with the reply key, for its webhook-id, fresh');
    expect(output).toContain('PASS signing     401 for a request signed for another audience');
    expect(output).toMatch(/25 passed, 1 failed, 0 skipped$/);
  });

  it('checks an admission function with its fixtures: plain JSON only, every CloudEvent a 415', async () => {
    const { code, output } = await conformance([new URL('/admit', admission.url).toString(), '--body-limit-bytes', String(LIMIT), '--fixtures', 'test/fixtures/require-label']);
    expect(output).toMatch(/^PASS cloudevents binary mode/m);
    expect(output).toMatch(/^PASS fixture +pod-without-team$/m);
    expect(output).toMatch(/ 0 failed, /);
    expect(code).toBe(0);
  });

  it('checks an admission function without fixtures when the URL ends in /admit', async () => {
    const { code, output } = await conformance([new URL('/admit', admission.url).toString(), '--body-limit-bytes', String(LIMIT)]);
    expect(output).toMatch(/^PASS transport +plain JSON request/m);
    expect(output).toMatch(/14 passed, 0 failed, 12 skipped$/);
    expect(code).toBe(0);
  });

  it('fails a broken function on exactly the cases it breaks, with the reason, and exits 1', async () => {
    const { code, output } = await conformance([brokenUrl, '--body-limit-bytes', String(LIMIT)]);
    expect(output).toMatch(/^FAIL transport +415 for a content type that is not JSON\n +want 415 UnsupportedMediaType, got HTTP 200: fine$/m);
    expect(output).toMatch(/^FAIL transport +405 for GET on the function path\n +want 405 MethodNotAllowed, got HTTP 404/m);
    expect(output).toMatch(/^FAIL cloudevents binary mode.*\n +want reply event type dev\.kubeloop\.reconcile\.response\.v1, got undefined$/m);
    expect(output).toMatch(/^PASS transport +400 for a body that is not JSON$/m);
    expect(output).toMatch(/^PASS cloudevents structured mode/m);
    expect(output).toMatch(/13 passed, 3 failed, 10 skipped$/);
    expect(code).toBe(1);
  });

  it('fails a function that ignores signing: it serves unsigned requests and leaves replies unsigned', async () => {
    const { code, output } = await conformance([plain.url, '--body-limit-bytes', String(LIMIT), '--signing-secret', SECRET]);
    expect(output).toMatch(/^FAIL signing +401 for an unsigned request, the refusal unsigned\n +want 401 InvalidSignature, got HTTP 200/m);
    expect(output).toMatch(/^FAIL signing +a signed request .*\n +the router would refuse this reply: reply signature refused: missing signature/m);
    expect(output).toMatch(/^FAIL signing +401 for a request signed with the reply key/m);
    expect(output).toMatch(/^FAIL transport +plain JSON request/m);
    expect(code).toBe(1);
  });

  it.each([
    ['signs its replies with the request key', 'request' as const, /it is signed with the request key; replies are signed with the reply key of loop\//],
    ['signs its replies for another audience', 'other' as const, /reply signature refused: no webhook-signature matches/],
    ['signs its replies with the secret itself', 'secret' as const, /it is signed with the secret's own key/],
  ])('fails a function that %s: the router would refuse its replies', async (_case, misuse, message) => {
    const server = await serveMissigning(misuse);
    try {
      const { code, output } = await conformance([server.url, '--body-limit-bytes', String(LIMIT), '--signing-secret', SECRET]);
      expect(output).toMatch(/^FAIL signing +a signed request is answered with a reply signed with the reply key/m);
      expect(output).toMatch(message);
      expect(code).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('fails a function that signs its 401 refusals (a signing oracle)', async () => {
    const server = await serveMissigning('signed-refusals');
    try {
      const { code, output } = await conformance([server.url, '--body-limit-bytes', String(LIMIT), '--signing-secret', SECRET]);
      expect(output).toMatch(/^FAIL signing +401 for an unsigned request, the refusal unsigned\n +the 401 refusal carries webhook-id; refusals are never signed/m);
      expect(output).toMatch(/^PASS signing +a signed request is answered with a reply signed with the reply key/m);
      expect(code).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('says "no answer within N ms" for a function that never answers', async () => {
    // Silent on the first request only, so the other cases fail fast.
    let requests = 0;
    const silent = createServer((_request, response) => void (requests++ > 0 && response.writeHead(404).end()));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { code, output } = await conformance([`http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, '--timeout-ms', '200', '--body-limit-bytes', '1024']);
      expect(output).toMatch(/^FAIL transport +plain JSON request.*\n +POST http:\/\/127\.0\.0\.1:\d+\/: no answer within 200 ms$/m);
      expect(code).toBe(1);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it.each([
    ['no URL', []],
    ['a URL that is not http', ['localhost:8080']],
    ['a bad secret', ['http://127.0.0.1:9/', '--signing-secret', 'whsec_???']],
    ['a missing fixtures folder', ['http://127.0.0.1:9/', '--fixtures', '/nonexistent']],
    ['a bad body limit', ['http://127.0.0.1:9/', '--body-limit-bytes', 'lots']],
  ])('exits 2 for bad usage: %s', async (_case, argv) => {
    expect((await conformance(argv)).code).toBe(2);
  });
});

/**
 * The real unsigned function (`plain`) behind a hand-made signing layer that gets one thing wrong: replies
 * signed with the request key, for another audience, or with the secret itself; or signed refusals.
 */
async function serveMissigning(misuse: 'request' | 'other' | 'secret' | 'signed-refusals'): Promise<{ url: string; close(): Promise<void> }> {
  const keys = parseSigningSecrets(SECRET);
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const verdict = verifyRequest(keys, incoming.headers, body);
        const id = requestMessageId(incoming.headers) ?? 'msg_none';
        if (!verdict.ok) {
          const refusal = JSON.stringify({ statusCode: 401, code: 'InvalidSignature', message: verdict.message });
          const signed = misuse === 'signed-refusals' ? signatureHeaders(directionKeys(keys, 'reply', 'loop/any'), refusal, { id }) : {};
          return void response.writeHead(401, { 'content-type': 'application/json', 'x-kubeloop-reconcile-id': 'r', ...signed }).end(refusal);
        }
        const audience = misuse === 'other' ? 'loop/another' : verdict.audience!;
        const replyKeys = misuse === 'secret' ? keys : directionKeys(keys, misuse === 'request' ? 'request' : 'reply', audience);
        const forwarded = Object.fromEntries(Object.entries(incoming.headers).filter(([name]) => !name.startsWith('webhook-') && name !== 'host' && name !== 'content-length')) as Record<string, string>;
        const reply = await request(new URL(incoming.url ?? '/', plain.url), { method: incoming.method as 'POST', headers: forwarded, body });
        const text = await reply.body.text();
        const headers = Object.fromEntries(Object.entries(reply.headers).filter(([name]) => !['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'date'].includes(name))) as Record<string, string>;
        response.writeHead(reply.statusCode, { ...headers, ...signatureHeaders(replyKeys, text, { id }) }).end(text);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
