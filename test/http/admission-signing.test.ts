// The gateway -> admission function hop signed, over real HTTPS into the gateway and real HTTP out: with a
// signing Secret on the hook, the runtime's signed patch is applied, and a reply that is unsigned, signed
// with another key, signed for another hook, or a request's signature echoed back is never applied.
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateBundle } from '../../certs/generate.ts';
import { createLogger } from '../../lib/observability/logger.ts';
import { generateSigningSecret, parseSigningSecret, signReply, verifyRequest } from '../../lib/signing/webhook-signature.ts';
import { startWatcherSidecarGateway, type WatcherSidecarGateway } from './watcher-sidecar-gateway.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const SECRET = generateSigningSecret();
const review = readFileSync(new URL('../fixtures/admission/pod-create-annotated.json', import.meta.url), 'utf8');
const FORGED_PATCH = [{ op: 'add', path: '/spec/containers/-', value: { name: 'miner', image: 'evil/miner' } }];

/** Answers every admission with a forged patch, signed as `how` says; records what it was sent. */
async function forger(how: (requestHeaders: Record<string, string | string[] | undefined>, body: string) => Record<string, string>): Promise<{ url: string; seen: Array<Record<string, string | string[] | undefined>>; close(): Promise<void> }> {
  const seen: Array<Record<string, string | string[] | undefined>> = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    const body = JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true, patch: FORGED_PATCH });
    res.writeHead(200, { 'content-type': 'application/json', ...how(req.headers, body) }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/admit`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

async function admit(gateway: WatcherSidecarGateway): Promise<{ allowed: boolean; patch?: string; warnings?: string[] }> {
  const agent = new Agent({ connect: { ca: gateway.bundle.ca.certPem } });
  try {
    const reply = await request(gateway.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: review, dispatcher: agent });
    expect(reply.statusCode).toBe(200);
    return ((await reply.body.json()) as { response: { allowed: boolean; patch?: string; warnings?: string[] } }).response;
  } finally {
    await agent.close();
  }
}

describe('a signed admission hook', () => {
  let gateway: WatcherSidecarGateway;
  beforeAll(async () => void (gateway = await startWatcherSidecarGateway(logger, { signingSecret: SECRET })));
  afterAll(() => gateway.close());

  it('signs the request for the hook and applies the function runtime signed patch', async () => {
    const response = await admit(gateway);
    expect(response.allowed).toBe(true);
    expect(JSON.parse(Buffer.from(response.patch ?? '', 'base64').toString())).toEqual(expect.arrayContaining([expect.objectContaining({ op: 'add' })]));
  });
});

describe.each([
  ['unsigned', () => ({})],
  ['signed with another key', (h: Record<string, string | string[] | undefined>, body: string) => signReply(parseSigningSecret(generateSigningSecret()), 'hook/watcher-sidecar', String(h['webhook-id']), body)],
  ['signed for another hook (audience)', (h: Record<string, string | string[] | undefined>, body: string) => signReply(parseSigningSecret(SECRET), 'hook/other', String(h['webhook-id']), body)],
  ['carrying the request signature echoed back', (h: Record<string, string | string[] | undefined>) => ({ 'webhook-id': String(h['webhook-id']), 'webhook-timestamp': String(h['webhook-timestamp']), 'webhook-signature': String(h['webhook-signature']) })],
])('a forged admission reply %s', (_case, how) => {
  let gateway: WatcherSidecarGateway;
  let forged: Awaited<ReturnType<typeof forger>>;
  beforeAll(async () => {
    forged = await forger(how);
    gateway = await startWatcherSidecarGateway(logger, { signingSecret: SECRET, functionUrl: forged.url });
  });
  afterAll(async () => {
    await gateway.close();
    await forged.close();
  });

  it('is never applied: the hook fails by its policy, and the request was signed for the hook', async () => {
    const response = await admit(gateway);
    expect(response.patch).toBeUndefined();
    // The sample hook is failurePolicy Ignore: admitted unchanged, with a warning saying why.
    expect(response.allowed).toBe(true);
    expect(response.warnings?.join(' ')).toMatch(/reply signature refused/);
    const sent = forged.seen.at(-1)!;
    expect(sent['x-kubeloop-audience']).toBe('hook/watcher-sidecar');
    expect(typeof sent['webhook-signature']).toBe('string');
  });
});

it('the request key and the reply key differ, so an echoed request signature cannot verify as a reply', () => {
  const key = parseSigningSecret(SECRET);
  const headers = { ...signReply(key, 'hook/watcher-sidecar', 'msg_x', '{}'), 'x-kubeloop-audience': 'hook/watcher-sidecar' };
  expect(verifyRequest(key, headers, '{}').ok).toBe(false);
});

describe('an https admission function', () => {
  let server: HttpsServer;
  let url = '';
  let ca = '';
  beforeAll(async () => {
    const bundle = await generateBundle({ now: new Date(), identity: { service: 'fn', namespace: 'n' } });
    ca = bundle.ca.certPem;
    server = createHttpsServer({ cert: bundle.serving.certPem, key: bundle.serving.keyPem }, (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: false, status: { code: 403, message: 'denied over TLS' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/admit`;
  });
  afterAll(() => void server.close());

  it("is trusted through the hook's caBundle, and not without it", async () => {
    const trusting = await startWatcherSidecarGateway(logger, { functionUrl: url, functionCaBundle: Buffer.from(ca).toString('base64') });
    const distrusting = await startWatcherSidecarGateway(logger, { functionUrl: url });
    try {
      expect(await admit(trusting)).toMatchObject({ allowed: false });
      const refused = await admit(distrusting);
      expect(refused.allowed).toBe(true);
      expect(refused.warnings?.join(' ')).toMatch(/is unreachable/);
    } finally {
      await trusting.close();
      await distrusting.close();
    }
  });
});
