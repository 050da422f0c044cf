// Standard Webhooks signatures with Web Crypto (crypto.subtle HMAC-SHA256), for the fetch handler on
// runtimes without node:crypto (Cloudflare Workers, workerd). Same rules as the Node path: standard-webhooks.ts.
import {
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
