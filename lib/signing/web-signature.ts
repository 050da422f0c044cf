// Standard Webhooks signatures with Web Crypto (crypto.subtle HMAC-SHA256), for the fetch handler on
// runtimes without node:crypto (Cloudflare Workers, workerd). Same rules as the Node path: standard-webhooks.ts.
import {
  DerivedKeyCache,
  keyDerivationLabel,
  MISSING_AUDIENCE,
  requestAudience,
  type SigningDirection,
  decodeSigningSecrets,
  formatSignatures,
  matchSignature,
  newMessageId,
  readSignatureClaim,
  signedPrefix,
  unixSeconds,
  type HeaderSource,
  type SignatureHeaders,
  type VerifyResult,
} from './standard-webhooks.ts';

/** Imported once: one per key (the new and the old one during a rotation). */
export type WebSigningKeys = readonly CryptoKey[];

const encoder = new TextEncoder();

/** Decodes one or more space-separated `whsec_` secrets into HMAC keys; the error never holds the secret. */
export async function importSigningSecrets(text: string, source = 'signing secret'): Promise<WebSigningKeys> {
  return Promise.all(
    decodeSigningSecrets(text, source).map((bytes) => crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])),
  );
}

function base64(bytes: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

async function hmac(key: CryptoKey, id: string, timestampSeconds: number, body: string): Promise<string> {
  return base64(await crypto.subtle.sign('HMAC', key, encoder.encode(signedPrefix(id, timestampSeconds) + body)));
}

/** The three headers for a body, one signature per key. */
export async function webSignatureHeaders(keys: WebSigningKeys, body: string, options: { id?: string | undefined; nowMs?: number } = {}): Promise<SignatureHeaders> {
  const id = options.id ?? newMessageId();
  const timestamp = unixSeconds(options.nowMs ?? Date.now());
  const signatures = await Promise.all(keys.map((key) => hmac(key, id, timestamp, body)));
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': formatSignatures(signatures) };
}

/** A valid, fresh signature by any of `keys`, or why not. */
export async function webVerify(keys: WebSigningKeys, headers: HeaderSource, body: string, options: { nowMs?: number } = {}): Promise<VerifyResult> {
  const read = readSignatureClaim(headers, { nowMs: options.nowMs ?? Date.now() });
  if (!read.ok) return read;
  const { id, timestamp } = read.claim;
  return matchSignature(read.claim, await Promise.all(keys.map((key) => hmac(key, id, timestamp, body))));
}

const derived = new DerivedKeyCache<CryptoKey, Promise<CryptoKey>>();

/** The keys of one direction and audience, HMAC-derived from each root key as on the Node path. */
export function webDirectionKeys(keys: WebSigningKeys, direction: SigningDirection, audience: string): Promise<WebSigningKeys> {
  const label = keyDerivationLabel(direction, audience);
  return Promise.all(
    keys.map((root) =>
      derived.get(root, label, async () =>
        crypto.subtle.importKey('raw', await crypto.subtle.sign('HMAC', root, encoder.encode(label)), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']),
      ),
    ),
  );
}

/** Verifies a request with the request keys of the audience it names (verifyRequest's Web twin). */
export async function webVerifyRequest(keys: WebSigningKeys, headers: HeaderSource, body: string, options: { nowMs?: number } = {}): Promise<VerifyResult & { audience?: string }> {
  const audience = requestAudience(headers);
  if (audience === undefined) return { ok: false, message: MISSING_AUDIENCE };
  const result = await webVerify(await webDirectionKeys(keys, 'request', audience), headers, body, options);
  return result.ok ? { ...result, audience } : result;
}

/** Signs the reply to a verified request (signReply's Web twin). */
export async function webSignReply(keys: WebSigningKeys, audience: string, requestId: string, body: string, options: { nowMs?: number } = {}): Promise<SignatureHeaders> {
  return webSignatureHeaders(await webDirectionKeys(keys, 'reply', audience), body, { ...options, id: requestId });
}
