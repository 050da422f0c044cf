// Signing follows the Standard Webhooks specification: checked against its reference library, the
// specification's own example, and the worked example in docs/contract.md.
import { readFileSync } from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { importSigningSecrets, webSignatureHeaders, webVerify } from './web-signature.ts';
import { audienceOf, directionKeys, generateSigningSecret, signRequest, verifyRequest, parseSigningSecret, parseSigningSecrets, sign, signatureHeaders, verify } from './webhook-signature.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const key = parseSigningSecret(SECRET);
const body = '{"apiVersion":"kubeloop.dev/v1","kind":"ReconcileRequest"}';

describe('Standard Webhooks signatures', () => {
  it('gives the specification example signature', () => {
    expect(sign(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('matches the worked example in docs/contract.md', () => {
    const doc = readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8');
    const block = /<!-- signing-example -->\s*```text\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(block, 'docs/contract.md has a signing-example block').toBeDefined();
    const field = (name: string) => new RegExp(`^${name.replace(/[()]/g, '\\$&')}: (.*)$`, 'm').exec(block!)?.[1] ?? '';
    const exampleKey = parseSigningSecret(field('secret'));
    expect(exampleKey.export().toString('hex')).toBe(field('key (hex)'));
    const audience = field('x-kubeloop-audience');
    expect(field('derivation message')).toBe(`kubeloop.dev/signing/v1 request ${audience}`);
    const [requestKey] = directionKeys(exampleKey, 'request', audience);
    const [replyKey] = directionKeys(exampleKey, 'reply', audience);
    expect(requestKey!.export().toString('hex')).toBe(field('request key (hex)'));
    expect(replyKey!.export().toString('hex')).toBe(field('reply key (hex)'));
    const [id, timestamp, body] = [field('webhook-id'), Number(field('webhook-timestamp')), field('body')];
    expect(sign(requestKey!, id, timestamp, body)).toBe(field('webhook-signature'));
    expect(sign(replyKey!, id, timestamp, body)).toBe(field('reply signature (same id, timestamp and body)'));
    expect(field('signed content')).toBe(`${id}.${timestamp}.${body}`);
    // The reference library agrees, given the derived key as its secret.
    const reference = new Webhook(`whsec_${requestKey!.export().toString('base64')}`);
    expect(reference.sign(id, new Date(timestamp * 1000), body)).toBe(field('webhook-signature'));
  });

  it('is verified by the reference library, and verifies its signatures', () => {
    const reference = new Webhook(SECRET);
    const headers = signatureHeaders(key, body);
    expect(() => reference.verify(body, { ...headers })).not.toThrow();
    const theirs = reference.sign('msg_1', new Date(), body);
    const result = verify(key, { 'webhook-id': 'msg_1', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': theirs }, body);
    expect(result).toEqual({ ok: true, id: 'msg_1' });
  });

  it('accepts any matching v1 signature among several (key rotation)', () => {
    const headers = signatureHeaders(key, body);
    const other = parseSigningSecret(generateSigningSecret());
    const rotated = `${sign(other, headers['webhook-id'], Number(headers['webhook-timestamp']), body)} ${headers['webhook-signature']}`;
    expect(verify(key, { ...headers, 'webhook-signature': rotated }, body).ok).toBe(true);
    expect(verify(other, headers, body).ok).toBe(false);
  });

  it('refuses a changed body, a changed id and a wrong key', () => {
    const headers = signatureHeaders(key, body);
    expect(verify(key, headers, `${body} `)).toMatchObject({ ok: false, message: expect.stringContaining('no webhook-signature matches') });
    expect(verify(key, { ...headers, 'webhook-id': 'msg_other' }, body).ok).toBe(false);
    expect(verify(parseSigningSecret(generateSigningSecret()), headers, body).ok).toBe(false);
  });

  it('refuses a stale (replayed) and a future timestamp, 5 minutes either way', () => {
    const now = Date.UTC(2026, 10, 22, 10, 0, 0);
    const old = signatureHeaders(key, body, { nowMs: now - 301_000 });
    expect(verify(key, old, body, { nowMs: now })).toMatchObject({ ok: false, message: expect.stringContaining('stale or replayed') });
    expect(verify(key, signatureHeaders(key, body, { nowMs: now - 299_000 }), body, { nowMs: now }).ok).toBe(true);
    const future = signatureHeaders(key, body, { nowMs: now + 301_000 });
    expect(verify(key, future, body, { nowMs: now })).toMatchObject({ ok: false, message: expect.stringContaining('in the future') });
  });

  it('refuses missing, repeated and malformed headers with a message', () => {
    const headers = signatureHeaders(key, body);
    expect(verify(key, {}, body)).toMatchObject({ ok: false, message: expect.stringContaining('missing signature') });
    expect(verify(key, { ...headers, 'webhook-id': ['a', 'b'] }, body).ok).toBe(false);
    expect(verify(key, { ...headers, 'webhook-timestamp': '1614265330abc' }, body)).toMatchObject({ message: expect.stringContaining('Unix seconds') });
    expect(verify(key, { ...headers, 'webhook-signature': 'v2,abc v1,' }, body).ok).toBe(false);
  });

  it('reads Web Headers as well as Node header objects', () => {
    const headers = signatureHeaders(key, body);
    expect(verify(key, new Headers({ ...headers }), body).ok).toBe(true);
  });

  it('refuses secrets that are not whsec_ base64 of 24 to 64 bytes, without echoing them', () => {
    expect(() => parseSigningSecret('whsec_not base64!')).toThrow(/not "whsec_" followed by base64/);
    expect(() => parseSigningSecret(`whsec_${Buffer.alloc(8).toString('base64')}`)).toThrow(/8 bytes/);
    expect(parseSigningSecret(generateSigningSecret()).symmetricKeySize).toBe(32);
    expect(parseSigningSecret('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n').symmetricKeySize).toBe(24);
  });

  it('signs with every key of a rotation and verifies with any of them', () => {
    const [next, previous] = [generateSigningSecret(), SECRET];
    const both = parseSigningSecrets(`${next} ${previous}`);
    const headers = signatureHeaders(both, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verify(key, headers, body).ok).toBe(true);
    expect(verify(parseSigningSecret(next), headers, body).ok).toBe(true);
    expect(verify(both, signatureHeaders(key, body), body).ok).toBe(true);
    expect(verify(both, signatureHeaders(parseSigningSecret(generateSigningSecret()), body), body)).toMatchObject({ ok: false, message: expect.stringContaining('any of these 2 keys') });
    expect(() => parseSigningSecret(`${next} ${previous}`)).toThrow(/holds 2 keys; want one/);
    expect(() => parseSigningSecrets(`${next} whsec_short`)).toThrow(/key 2 of 2/);
    expect(() => parseSigningSecrets(Array.from({ length: 5 }, generateSigningSecret).join(' '))).toThrow(/at most 4/);
  });

  it('signs a namespaced Loop for loop/<namespace>/<name>, which no other namespace\'s Loop of that name verifies', () => {
    const audience = audienceOf({ kind: 'ReconcileRequest', loop: 'labeller', loopNamespace: 'team-a' });
    expect(audience).toBe('loop/team-a/labeller');
    expect(audienceOf({ kind: 'ReconcileRequest', loop: 'labeller' })).toBe('loop/labeller');
    const headers = signRequest(key, audience, body);
    expect(verifyRequest(key, headers, body)).toMatchObject({ ok: true, audience: 'loop/team-a/labeller' });
    const forged = { ...headers, 'x-kubeloop-audience': 'loop/team-b/labeller' };
    expect(verifyRequest(key, forged, body).ok).toBe(false);
    for (const malformed of ['loop/a/b/c', 'loop/Team/x', 'loop//x', 'loop/team-a/']) {
      expect(verifyRequest(key, { ...headers, 'x-kubeloop-audience': malformed }, body)).toMatchObject({ ok: false, message: expect.stringContaining('missing or malformed') });
    }
  });
});

describe('Standard Webhooks signatures with Web Crypto', () => {
  it('gives the specification example signature and agrees with the node:crypto path both ways', async () => {
    const web = await importSigningSecrets(SECRET);
    const example = await webSignatureHeaders(web, '{"test": 2432232314}', { id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', nowMs: 1614265330_000 });
    expect(example['webhook-signature']).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(verify(key, await webSignatureHeaders(web, body), body).ok).toBe(true);
    expect(await webVerify(web, signatureHeaders(key, body), body)).toMatchObject({ ok: true });
  });

  it('applies the same rules: stale timestamps, other keys and changed bodies are refused', async () => {
    const now = Date.UTC(2026, 10, 22, 10, 0, 0);
    const web = await importSigningSecrets(`${generateSigningSecret()} ${SECRET}`);
    expect(await webVerify(web, signatureHeaders(key, body, { nowMs: now - 301_000 }), body, { nowMs: now })).toMatchObject({ ok: false, message: expect.stringContaining('stale or replayed') });
    expect(await webVerify(web, signatureHeaders(key, body), `${body} `)).toMatchObject({ ok: false });
    expect(await webVerify(web, signatureHeaders(parseSigningSecret(generateSigningSecret()), body), body)).toMatchObject({ ok: false });
    await expect(importSigningSecrets('whsec_short')).rejects.toThrow(/not "whsec_" followed by base64/);
  });
});
