// The Standard Webhooks rules (https://www.standardwebhooks.com), free of any crypto implementation so the
// Node path (webhook-signature.ts, node:crypto) and the Web path (web-signature.ts, crypto.subtle) share
// them: secret format, headers, 5-minute tolerance, the signed content, several space-separated signatures.
// Web-platform globals only (atob, btoa): the fetch handler imports this where Node is absent.

export const SECRET_PREFIX = 'whsec_';
/** The specification's tolerance: a timestamp further than 5 minutes from now, either way, is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;
/** The specification asks for 24 to 64 random bytes. */
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;
/** More keys than a rotation needs is a mistake (and would multiply the HMACs per call). */
export const MAX_KEYS = 4;
const ID_PATTERN = /^[^.\s]{1,256}$/;

export type SignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

export type VerifyResult = { ok: true; id: string } | { ok: false; message: string };

export type HeaderSource = Record<string, string | string[] | undefined> | { get(name: string): string | null };

/** The base64 HMAC-SHA256 of a signed content: what each crypto implementation supplies. */
export type Signature = string;

/** Decodes one `whsec_<base64>` secret (the prefix is optional); the error says what is wrong, never the secret. */
export function decodeSigningSecret(text: string, source = 'signing secret'): Uint8Array<ArrayBuffer> {
  const trimmed = text.trim();
  const encoded = trimmed.startsWith(SECRET_PREFIX) ? trimmed.slice(SECRET_PREFIX.length) : trimmed;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) {
    throw new Error(`${source} is not "${SECRET_PREFIX}" followed by base64`);
  }
  const key = Uint8Array.from(atob(encoded), (c) => c.charCodeAt(0));
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES) {
    throw new Error(`${source} decodes to ${key.length} bytes; want ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} random bytes`);
  }
  return key;
}

/**
 * One or more space-separated secrets ("whsec_new whsec_old" during a rotation): requests signed with any
 * of them are accepted and replies carry a signature per key, so either side can move first.
 */
export function decodeSigningSecrets(text: string, source = 'signing secret'): Array<Uint8Array<ArrayBuffer>> {
  const parts = text.trim().split(/\s+/).filter((part) => part !== '');
  if (parts.length === 0) throw new Error(`${source} is empty`);
  if (parts.length > MAX_KEYS) throw new Error(`${source} holds ${parts.length} keys; at most ${MAX_KEYS} (space-separated, for a rotation)`);
  return parts.map((part, i) => decodeSigningSecret(part, parts.length === 1 ? source : `${source} (key ${i + 1} of ${parts.length})`));
}

/**
 * kubeloop never signs with the secret itself: each message is signed with a key derived from it for one
 * direction and one audience (HMAC-SHA256(secret, label)), so a reply can never pass as a request, nor a
 * message for one Loop or hook as one for another, even when they share a secret.
 */
export type SigningDirection = 'request' | 'reply';
/**
 * The header naming the audience of a request: "loop/<name>" or "hook/<name>" for the cluster kinds,
 * "loop/<namespace>/<name>" or "hook/<namespace>/<name>" for the namespaced ones (docs/tenants.md).
 */
export const AUDIENCE_HEADER = 'x-kubeloop-audience';
const AUDIENCE_PATTERN = /^[a-z]+\/(?:[a-z0-9][a-z0-9-]{0,62}\/)?[a-z0-9][a-z0-9.-]{0,252}$/;

export const isAudience = (value: string): boolean => AUDIENCE_PATTERN.test(value);
/** A loop's or hook's identity is `<namespace>/<name>` when namespaced, `<name>` when cluster-scoped. */
export const loopAudience = (loop: string): string => `loop/${loop}`;
export const hookAudience = (hook: string): string => `hook/${hook}`;

/** What the secret signs to give the key of one direction and audience (docs/contract.md, "Signed calls"). */
export const keyDerivationLabel = (direction: SigningDirection, audience: string): string => `kubeloop.dev/signing/v1 ${direction} ${audience}`;

/** The audience a request names, when well-formed. */
export function requestAudience(headers: HeaderSource): string | undefined {
  const audience = header(headers, AUDIENCE_HEADER);
  return audience !== undefined && isAudience(audience) ? audience : undefined;
}

export const MISSING_AUDIENCE = `missing or malformed ${AUDIENCE_HEADER} header: want "loop/[<namespace>/]<name>" or "hook/[<namespace>/]<name>"`;

/** Derived keys per root key, bounded: an audience comes from a request header, so anyone can invent one. */
export class DerivedKeyCache<Root extends object, Key> {
  readonly #cache = new WeakMap<Root, Map<string, Key>>();
  constructor(private readonly max = 1024) {}
  get(root: Root, label: string, derive: () => Key): Key {
    let byLabel = this.#cache.get(root);
    if (!byLabel) this.#cache.set(root, (byLabel = new Map()));
    let key = byLabel.get(label);
    if (key === undefined) {
      if (byLabel.size >= this.max) byLabel.clear();
      byLabel.set(label, (key = derive()));
    }
    return key;
  }
}

/** What is signed: "id.timestamp." followed by the body. */
export const signedPrefix = (id: string, timestampSeconds: number): string => `${id}.${timestampSeconds}.`;

/** The webhook-signature header value: one `v1,<base64>` per key, space-separated. */
export const formatSignatures = (signatures: readonly Signature[]): string => signatures.map((s) => `v1,${s}`).join(' ');

export const unixSeconds = (nowMs: number): number => Math.floor(nowMs / 1000);

/** A fresh message id, "msg_<uuid>" (crypto.randomUUID is a Web global). */
export const newMessageId = (): string => `msg_${crypto.randomUUID()}`;

/** The webhook-id of a request when it is usable as the id of the signed reply. */
export function requestMessageId(headers: HeaderSource): string | undefined {
  const id = header(headers, 'webhook-id');
  return id !== undefined && ID_PATTERN.test(id) ? id : undefined;
}

function header(headers: HeaderSource, name: string): string | undefined {
  const value = typeof headers.get === 'function' ? (headers as { get(n: string): string | null }).get(name) : (headers as Record<string, unknown>)[name];
  if (Array.isArray(value)) return value.length === 1 && typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export interface SignatureClaim {
  id: string;
  timestamp: number;
  /** The base64 part of every `v1,` signature offered. */
  offered: string[];
}

/** Step one of verifying: the three headers are present, well-formed and fresh. */
export function readSignatureClaim(
  headers: HeaderSource,
  options: { nowMs: number; toleranceSeconds?: number },
): { ok: true; claim: SignatureClaim } | { ok: false; message: string } {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || timestampText === undefined || signatures === undefined) {
    return { ok: false, message: 'missing signature: want one each of the webhook-id, webhook-timestamp and webhook-signature headers' };
  }
  if (!ID_PATTERN.test(id)) return { ok: false, message: 'webhook-id must be 1 to 256 characters without "." or spaces' };
  if (!/^[0-9]{1,12}$/.test(timestampText)) return { ok: false, message: 'webhook-timestamp must be Unix seconds' };
  const timestamp = Number(timestampText);
  const now = unixSeconds(options.nowMs);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (now - timestamp > tolerance) return { ok: false, message: `webhook-timestamp is ${now - timestamp} s old; at most ${tolerance} s is accepted (stale or replayed)` };
  if (timestamp - now > tolerance) return { ok: false, message: `webhook-timestamp is ${timestamp - now} s in the future; at most ${tolerance} s is accepted` };
  const offered = signatures.split(' ').flatMap((candidate) => (candidate.startsWith('v1,') ? [candidate.slice(3)] : []));
  return { ok: true, claim: { id, timestamp, offered } };
}

/** Compares without an early exit, so the time taken does not tell how much of a guess was right. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/** Step two: does any offered signature equal one computed with any of our keys? */
export function matchSignature(claim: SignatureClaim, expected: readonly Signature[]): VerifyResult {
  for (const given of claim.offered) {
    for (const signature of expected) if (constantTimeEqual(given, signature)) return { ok: true, id: claim.id };
  }
  const keys = expected.length === 1 ? 'this key' : `any of these ${expected.length} keys`;
  return { ok: false, message: `no webhook-signature matches the body with ${keys}` };
}
