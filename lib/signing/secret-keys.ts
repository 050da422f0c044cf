// Reads Standard Webhooks keys from a Secret key (a Loop's or an AdmissionHook's signingSecretRef): one
// `whsec_` secret, or the new and the old one space-separated while the key is rotated.
import type { V1Secret } from '@kubernetes/client-node';
import type { SecretKeyRef } from '../../api/loop.ts';
import { isApiError, type KubeClient } from '../kube/kube-client.ts';
import { parseSigningSecrets, type SigningKeys } from './webhook-signature.ts';

/** The Secret or its key is missing, unreadable or not a whsec_ secret; the message never holds the secret. */
export class SigningSecretError extends Error {
  override name = 'SigningSecretError';
}

export const describeSecretRef = (ref: SecretKeyRef): string => `signing Secret ${ref.namespace}/${ref.name} key "${ref.key}"`;

/** The keys held by `secret` (undefined: it does not exist), or a SigningSecretError saying what is wrong. */
export function signingKeysFrom(secret: Pick<V1Secret, 'data'> | undefined, ref: SecretKeyRef): SigningKeys {
  const where = describeSecretRef(ref);
  if (!secret) throw new SigningSecretError(`${where}: the Secret does not exist`);
  const encoded = secret.data?.[ref.key];
  if (encoded === undefined) throw new SigningSecretError(`${where}: the Secret has no such key`);
  try {
    return parseSigningSecrets(Buffer.from(encoded, 'base64').toString('utf8'), where);
  } catch (error) {
    throw new SigningSecretError((error as Error).message);
  }
}

/** Reads the keys as `client` (the router: as the Loop's ServiceAccount; the gateway: as itself). */
export async function readSigningKeys(client: KubeClient, ref: SecretKeyRef, reader = 'the router'): Promise<SigningKeys> {
  let secret: V1Secret | undefined;
  try {
    secret = await client.getIfExists<V1Secret>({ path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}` });
  } catch (error) {
    if (isApiError(error, 403)) throw new SigningSecretError(`${describeSecretRef(ref)}: ${reader} may not read it (${error.message})`);
    throw error;
  }
  return signingKeysFrom(secret, ref);
}
