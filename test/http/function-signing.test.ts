// Signed calls over real HTTP through the three transports of the function runtime: with a key, an
// unsigned, tampered, wrongly keyed or replayed (stale) request is refused with an unsigned 401 and never
// reaches the function; a signed one is answered with a reply signed with the reply key of its audience for
// the request's webhook-id; a reply (or a message for another audience) never passes as a request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.ts';
import { directionKeys, generateSigningSecret, parseSigningSecret, signatureHeaders, signReply, signRequest, verifyReply, type SigningKey } from '../../lib/signing/webhook-signature.ts';
import { exampleFunction, podRequest } from './example-function.ts';
import { threeTransports } from './three-transports.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const SECRET = generateSigningSecret();
const key = parseSigningSecret(SECRET);
const JSON_HEADERS = { 'content-type': 'application/json' };
const AUDIENCE = 'loop/web';
const sign = (k: SigningKey, body: string, nowMs?: number) => signRequest(k, AUDIENCE, body, nowMs === undefined ? {} : { nowMs });
const replyOk = (k: SigningKey, id: string, answer: { headers: Record<string, string>; body: string }) => verifyReply(k, AUDIENCE, id, answer.headers, answer.body);
let called = 0;
const counting = { ...exampleFunction, reconcile: (r: Parameters<typeof exampleFunction.reconcile>[0]) => (called++, exampleFunction.reconcile(r)) };
const { transports, start, close } = threeTransports(counting, { logger, signingSecret: SECRET });

beforeAll(start);
afterAll(close);

describe.each(transports)('%s with a signing key', (_name, send) => {
  const body = JSON.stringify(podRequest({ reconcileId: 'rec-signed' }));

  it('answers a signed request with a reply signed with the reply key for the same webhook-id', async () => {
    const headers = sign(key, body);
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...headers }, body);
    expect(answer.status).toBe(200);
    expect(answer.headers['webhook-id']).toBe(headers['webhook-id']);
    expect(replyOk(key, headers['webhook-id'], answer)).toEqual({ ok: true, id: headers['webhook-id'] });
    // Not with the secret itself, nor with the request key: the directions are apart.
    expect(verifyReply(key, 'loop/other', headers['webhook-id'], answer.headers, answer.body).ok).toBe(false);
  });

  it.each([
    ['an unsigned request', () => ({}), body, /missing/],
    ['a request without an audience', () => { const { 'x-kubeloop-audience': _a, ...rest } = sign(key, body); return rest; }, body, /x-kubeloop-audience/],
    ['a request signed with the secret itself (the old scheme)', () => ({ ...signatureHeaders(key, body), 'x-kubeloop-audience': AUDIENCE }), body, /no webhook-signature matches/],
    ['a request signed for another audience', () => ({ ...signRequest(key, 'loop/other', body), 'x-kubeloop-audience': AUDIENCE }), body, /no webhook-signature matches/],
    ['a reply replayed as a request', () => ({ ...signReply(key, AUDIENCE, 'msg_1', body), 'x-kubeloop-audience': AUDIENCE }), body, /no webhook-signature matches/],
    ['a tampered body', () => sign(key, body), body.replace('web-0', 'web-1'), /no webhook-signature matches/],
    ['a request signed with another key', () => sign(parseSigningSecret(generateSigningSecret()), body), body, /no webhook-signature matches/],
    ['a replayed request signed 6 minutes ago', () => sign(key, body, Date.now() - 6 * 60_000), body, /stale or replayed/],
    ['a request dated 6 minutes ahead', () => sign(key, body, Date.now() + 6 * 60_000), body, /in the future/],
  ])('refuses %s with an unsigned 401 before the function runs', async (_case, headersOf, sent, message) => {
    const before = called;
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...headersOf() }, sent);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 401, code: 'InvalidSignature', message: expect.stringMatching(message) });
    // Signing a refusal with the caller's webhook-id would sign any id anyone asks for.
    expect(answer.headers['webhook-signature']).toBeUndefined();
    expect(called).toBe(before);
  });
});

describe('key derivation', () => {
  it('derives different keys per direction and audience, each stable', () => {
    const derived = (d: 'request' | 'reply', a: string) => directionKeys(key, d, a)[0]!.export().toString('base64');
    const all = [derived('request', 'loop/a'), derived('reply', 'loop/a'), derived('request', 'loop/b'), derived('request', 'hook/a')];
    expect(new Set(all).size).toBe(4);
    expect(derived('request', 'loop/a')).toBe(all[0]);
    expect(all).not.toContain(key.export().toString('base64'));
  });
});

// During a rotation the function holds both keys ("whsec_new whsec_old"): a router still on either key is
// served, and each reply carries a signature per key so the router verifies it with whichever it holds.
const NEXT = generateSigningSecret();
const rotating = threeTransports(counting, { logger, signingSecret: `${NEXT} ${SECRET}` });
beforeAll(rotating.start);
afterAll(rotating.close);

describe.each(rotating.transports)('%s while the key is rotated', (_name, send) => {
  const body = JSON.stringify(podRequest({ reconcileId: 'rec-rotating' }));

  it.each([
    ['the old key', () => key],
    ['the new key', () => parseSigningSecret(NEXT)],
  ])('accepts a request signed with %s and signs the reply with both', async (_case, keyOf) => {
    const headers = sign(keyOf(), body);
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...headers }, body);
    expect(answer.status).toBe(200);
    expect(answer.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(replyOk(key, headers['webhook-id'], answer).ok).toBe(true);
    expect(replyOk(parseSigningSecret(NEXT), headers['webhook-id'], answer).ok).toBe(true);
  });

  it('still refuses a third key', async () => {
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...sign(parseSigningSecret(generateSigningSecret()), body) }, body);
    expect(answer.status).toBe(401);
  });
});
