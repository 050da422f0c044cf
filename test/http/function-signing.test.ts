// Signed calls over real HTTP through the three transports of the function runtime: with a key, an
// unsigned, tampered, wrongly keyed or replayed (stale) request is refused with 401 and never reaches the
// function; a signed one is answered with a reply signed with the request's webhook-id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.ts';
import { generateSigningSecret, parseSigningSecret, signatureHeaders, verify } from '../../lib/signing/webhook-signature.ts';
import { exampleFunction, podRequest } from './example-function.ts';
import { threeTransports } from './three-transports.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const SECRET = generateSigningSecret();
const key = parseSigningSecret(SECRET);
const JSON_HEADERS = { 'content-type': 'application/json' };
let called = 0;
const counting = { ...exampleFunction, reconcile: (r: Parameters<typeof exampleFunction.reconcile>[0]) => (called++, exampleFunction.reconcile(r)) };
const { transports, start, close } = threeTransports(counting, { logger, signingSecret: SECRET });

beforeAll(start);
afterAll(close);

describe.each(transports)('%s with a signing key', (_name, send) => {
  const body = JSON.stringify(podRequest({ reconcileId: 'rec-signed' }));

  it('answers a signed request with a reply signed with the same webhook-id', async () => {
    const headers = signatureHeaders(key, body);
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...headers }, body);
    expect(answer.status).toBe(200);
    expect(answer.headers['webhook-id']).toBe(headers['webhook-id']);
    expect(verify(key, answer.headers, answer.body)).toEqual({ ok: true, id: headers['webhook-id'] });
  });

  it.each([
    ['an unsigned request', () => ({}), body, /missing signature/],
    ['a tampered body', () => signatureHeaders(key, body), body.replace('web-0', 'web-1'), /no webhook-signature matches/],
    ['a request signed with another key', () => signatureHeaders(parseSigningSecret(generateSigningSecret()), body), body, /no webhook-signature matches/],
    ['a replayed request signed 6 minutes ago', () => signatureHeaders(key, body, { nowMs: Date.now() - 6 * 60_000 }), body, /stale or replayed/],
    ['a request dated 6 minutes ahead', () => signatureHeaders(key, body, { nowMs: Date.now() + 6 * 60_000 }), body, /in the future/],
  ])('refuses %s with 401 before the function runs', async (_case, headersOf, sent, message) => {
    const before = called;
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...headersOf() }, sent);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ statusCode: 401, code: 'InvalidSignature', message: expect.stringMatching(message) });
    expect(called).toBe(before);
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
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...signatureHeaders(keyOf(), body) }, body);
    expect(answer.status).toBe(200);
    expect(answer.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(verify(key, answer.headers, answer.body).ok).toBe(true);
    expect(verify(parseSigningSecret(NEXT), answer.headers, answer.body).ok).toBe(true);
  });

  it('still refuses a third key', async () => {
    const answer = await send('POST', '/', { ...JSON_HEADERS, ...signatureHeaders(parseSigningSecret(generateSigningSecret()), body) }, body);
    expect(answer.status).toBe(401);
  });
});
