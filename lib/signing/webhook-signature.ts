// Standard Webhooks signatures with node:crypto, for the router and the Node function runtime; the rules
// themselves are standard-webhooks.ts, shared with the Web Crypto path (web-signature.ts).
// node:crypto rather than the `standardwebhooks` package: its pure-JS SHA-256 is 4x slower on a 2 KiB body
// and 8x on 1 MiB (blocking the event loop), it JSON-parses on verify and throws on repeated headers.
import type { KeyObject } from 'node:crypto';
import {
  DerivedKeyCache,
  keyDerivationLabel,
  AUDIENCE_HEADER,
  MISSING_AUDIENCE,
  requestAudience,
  decodeSigningSecrets,
  formatSignatures,
  matchSignature,
  newMessageId,
  readSignatureClaim,
  SECRET_PREFIX,
  signedPrefix,
  unixSeconds,
  type HeaderSource,
  type SignatureHeaders,
  type SigningDirection,
  type VerifyResult,
} from './standard-webhooks.ts';

import { hookAudience, loopAudience } from './standard-webhooks.ts';

export { AUDIENCE_HEADER, hookAudience, loopAudience, type SigningDirection } from './standard-webhooks.ts';

/**
 * Whom a request is signed for: an AdmissionRequest's hook, a ReconcileRequest's Loop (as the gateway and
 * the router sign them); a namespaced Loop's or AdmissionHook's audience carries its namespace.
 */
export const audienceOf = (request: { kind: string; loop?: string; loopNamespace?: string; hook?: string; hookNamespace?: string }): string =>
  request.kind === 'AdmissionRequest'
    ? hookAudience(request.hookNamespace ? `${request.hookNamespace}/${request.hook ?? ''}` : (request.hook ?? ''))
    : loopAudience(request.loopNamespace ? `${request.loopNamespace}/${request.loop ?? ''}` : (request.loop ?? ''));
export { DEFAULT_TOLERANCE_SECONDS, SECRET_PREFIX, type SignatureHeaders, type VerifyResult } from './standard-webhooks.ts';

// node:crypto on first use, not at import: it is ~2 MiB of RSS (its 17 modules and their objects), and a function
// started without a signing key, which imports this module with its configuration, never signs or verifies.
const nodeCrypto = (): typeof import('node:crypto') => process.getBuiltinModule('node:crypto');

/**
 * A KeyObject, made once per key: createHmac with a Buffer key re-imports the key on every call, which
 * cost ~10x the HMAC itself (bench:functions, signed path).
 */
export type SigningKey = KeyObject & { readonly __signingKey: true };
/** The keys of one side: one, or the new and the old during a rotation. */
export type SigningKeys = readonly SigningKey[];

const toKey = (bytes: Uint8Array): SigningKey => nodeCrypto().createSecretKey(bytes) as SigningKey;

/** Decodes a `whsec_<base64>` secret (the prefix is optional); the error says what is wrong, never the secret. */
export function parseSigningSecret(text: string, source = 'signing secret'): SigningKey {
  const keys = parseSigningSecrets(text, source);
  if (keys.length !== 1) throw new Error(`${source} holds ${keys.length} keys; want one`);
  return keys[0]!;
}

/** One or more space-separated `whsec_` secrets ("whsec_new whsec_old" while rotating). */
export function parseSigningSecrets(text: string, source = 'signing secret'): SigningKeys {
  return decodeSigningSecrets(text, source).map(toKey);
}

/** A fresh secret in the specification's format (32 random bytes). */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + nodeCrypto().randomBytes(32).toString('base64');
}

/** The keys back as the secret text a function is configured with ("whsec_a whsec_b"): `kubeloop diff` serves a module signing as the Loop's. */
export function formatSigningSecrets(keys: SigningKeys): string {
  return keys.map((key) => SECRET_PREFIX + key.export().toString('base64')).join(' ');
}

const hmac = (key: SigningKey, id: string, timestampSeconds: number, body: string): string =>
  nodeCrypto().createHmac('sha256', key).update(signedPrefix(id, timestampSeconds)).update(body).digest('base64');

const asKeys = (keys: SigningKey | SigningKeys): SigningKeys => (Array.isArray(keys) ? (keys as SigningKeys) : [keys as SigningKey]);

/** The `v1,<base64>` signature of one message with one key. */
export function sign(key: SigningKey, id: string, timestampSeconds: number, body: string): string {
  return formatSignatures([hmac(key, id, timestampSeconds, body)]);
}

/** The three headers for a body, one signature per key; `id` defaults to a fresh "msg_<uuid>", `now` to the clock. */
export function signatureHeaders(keys: SigningKey | SigningKeys, body: string, options: { id?: string | undefined; nowMs?: number } = {}): SignatureHeaders {
  const id = options.id ?? newMessageId();
  const timestamp = unixSeconds(options.nowMs ?? Date.now());
  const signatures = asKeys(keys).map((key) => hmac(key, id, timestamp, body));
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': formatSignatures(signatures) };
}

/**
 * Checks the three headers against the body: a v1 signature among the space-separated ones must match
 * one made with any of `keys`, and the timestamp must be within `toleranceSeconds` of now.
 */
export function verify(
  keys: SigningKey | SigningKeys,
  headers: HeaderSource,
  body: string,
  options: { nowMs?: number; toleranceSeconds?: number } = {},
): VerifyResult {
  const read = readSignatureClaim(headers, { nowMs: options.nowMs ?? Date.now(), ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}) });
  if (!read.ok) return read;
  const { id, timestamp } = read.claim;
  return matchSignature(read.claim, asKeys(keys).map((key) => hmac(key, id, timestamp, body)));
}

const derived = new DerivedKeyCache<SigningKey, SigningKey>();

/** The keys of one direction and audience, derived from each root key (made once, then cached). */
export function directionKeys(keys: SigningKey | SigningKeys, direction: SigningDirection, audience: string): SigningKeys {
  const label = keyDerivationLabel(direction, audience);
  return asKeys(keys).map((root) => derived.get(root, label, () => toKey(nodeCrypto().createHmac('sha256', root).update(label).digest())));
}

export type RequestSignatureHeaders = SignatureHeaders & { [AUDIENCE_HEADER]: string };

/** Signs a request for `audience` with the request keys: a fresh id and timestamp per call. */
export function signRequest(keys: SigningKey | SigningKeys, audience: string, body: string, options: { nowMs?: number } = {}): RequestSignatureHeaders {
  return { ...signatureHeaders(directionKeys(keys, 'request', audience), body, options), [AUDIENCE_HEADER]: audience };
}

/** Verifies a request with the request keys of the audience it names. */
export function verifyRequest(keys: SigningKey | SigningKeys, headers: HeaderSource, body: string, options: { nowMs?: number } = {}): VerifyResult & { audience?: string } {
  const audience = requestAudience(headers);
  if (audience === undefined) return { ok: false, message: MISSING_AUDIENCE };
  const result = verify(directionKeys(keys, 'request', audience), headers, body, options);
  return result.ok ? { ...result, audience } : result;
}

/** Signs the reply to a verified request: its webhook-id, the reply keys of its audience. */
export function signReply(keys: SigningKey | SigningKeys, audience: string, requestId: string, body: string, options: { nowMs?: number } = {}): SignatureHeaders {
  return signatureHeaders(directionKeys(keys, 'reply', audience), body, { ...options, id: requestId });
}

/** Verifies a reply: signed with the reply keys of `audience`, for the request `requestId`. */
export function verifyReply(keys: SigningKey | SigningKeys, audience: string, requestId: string, headers: HeaderSource, body: string, options: { nowMs?: number } = {}): VerifyResult {
  const result = verify(directionKeys(keys, 'reply', audience), headers, body, options);
  if (result.ok && result.id !== requestId) return { ok: false, message: `reply is signed for another webhook-id, not this request's ${requestId}` };
  return result;
}
