// Reads the Standard Webhooks key a Loop names (spec.function.signingSecretRef) from its Secret.
import type { SecretKeyRef } from '../api/loop.ts';
import { isApiError, type KubeClient } from '../lib/kube/kube-client.ts';
import { parseSigningSecret, type SigningKey } from '../lib/signing/webhook-signature.ts';

/** The Secret or its key is missing, unreadable or not a whsec_ secret; the message never holds the secret. */
export class SigningSecretError extends Error {
  override name = 'SigningSecretError';
}

export async function readSigningKey(client: KubeClient, ref: SecretKeyRef): Promise<SigningKey> {
  const where = `Secret ${ref.namespace}/${ref.name} key "${ref.key}"`;
  let secret: { data?: Record<string, string> };
  try {
    secret = await client.request({ method: 'GET', path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}` });
  } catch (error) {
    if (isApiError(error, 404)) throw new SigningSecretError(`signing ${where}: the Secret does not exist`);
    if (isApiError(error, 403)) throw new SigningSecretError(`signing ${where}: the router may not read it (${error.message})`);
    throw error;
  }
  const encoded = secret.data?.[ref.key];
  if (encoded === undefined) throw new SigningSecretError(`signing ${where}: the Secret has no such key`);
  try {
    return parseSigningSecret(Buffer.from(encoded, 'base64').toString('utf8'), `signing ${where}`);
  } catch (error) {
    throw new SigningSecretError((error as Error).message);
  }
}
