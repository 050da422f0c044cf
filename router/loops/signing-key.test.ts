// The signing keys a Loop reads from its Secret, and what it says when they are wrong.
import { describe, expect, it } from 'vitest';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';
import { SigningSecretError, signingKeysFrom } from './signing-key.ts';

const ref = { namespace: 'ns', name: 'fn-signing', key: 'secret' };
const data = (value: string) => ({ data: { secret: Buffer.from(value).toString('base64') } });

describe('signingKeysFrom', () => {
  it('reads one key, or the new and the old one of a rotation', () => {
    expect(signingKeysFrom(data(generateSigningSecret()), ref)).toHaveLength(1);
    expect(signingKeysFrom(data(`${generateSigningSecret()} ${generateSigningSecret()}\n`), ref)).toHaveLength(2);
  });

  it.each([
    ['a missing Secret', undefined, 'signing Secret ns/fn-signing key "secret": the Secret does not exist'],
    ['a Secret without the key', { data: {} }, 'signing Secret ns/fn-signing key "secret": the Secret has no such key'],
    ['a value that is not whsec_ base64', data('whsec_hunter2!'), 'signing Secret ns/fn-signing key "secret" is not "whsec_" followed by base64'],
  ])('names what is wrong with %s, never the value', (_case, secret, message) => {
    expect(() => signingKeysFrom(secret, ref)).toThrow(new SigningSecretError(message));
  });
});
