// Reads the Standard Webhooks key(s) a Loop names (spec.function.signingSecretRef) from its Secret: one
// `whsec_` secret, or the new and the old one space-separated while the key is rotated; and follows it.
import type { V1Secret } from '@kubernetes/client-node';
import type { SecretKeyRef } from '../../api/loop.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { SECRETS, watchNamedObject, type NamedObjectWatch } from '../../lib/kube/named-object-watch.ts';
import { parseSigningSecrets, type SigningKeys } from '../../lib/signing/webhook-signature.ts';

/** The Secret or its key is missing, unreadable or not a whsec_ secret; the message never holds the secret. */
export class SigningSecretError extends Error {
  override name = 'SigningSecretError';
}

const describeRef = (ref: SecretKeyRef): string => `signing Secret ${ref.namespace}/${ref.name} key "${ref.key}"`;

/** The keys held by `secret` (undefined: it does not exist), or a SigningSecretError saying what is wrong. */
export function signingKeysFrom(secret: Pick<V1Secret, 'data'> | undefined, ref: SecretKeyRef): SigningKeys {
  const where = describeRef(ref);
  if (!secret) throw new SigningSecretError(`${where}: the Secret does not exist`);
  const encoded = secret.data?.[ref.key];
  if (encoded === undefined) throw new SigningSecretError(`${where}: the Secret has no such key`);
  try {
    return parseSigningSecrets(Buffer.from(encoded, 'base64').toString('utf8'), where);
  } catch (error) {
    throw new SigningSecretError((error as Error).message);
  }
}

export async function readSigningKeys(client: KubeClient, ref: SecretKeyRef): Promise<SigningKeys> {
  let secret: V1Secret | undefined;
  try {
    secret = await client.getIfExists<V1Secret>({ path: `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets/${encodeURIComponent(ref.name)}` });
  } catch (error) {
    if (isApiError(error, 403)) throw new SigningSecretError(`${describeRef(ref)}: the router may not read it (${error.message})`);
    throw error;
  }
  return signingKeysFrom(secret, ref);
}

const sameKeys = (a: SigningKeys, b: SigningKeys): boolean => a.length === b.length && a.every((key, i) => key.equals(b[i]!));

export interface SigningKeyWatchHandlers {
  /** The Secret now holds other valid keys: sign the next call with them. */
  rotated(keys: SigningKeys): void;
  /** The Secret was deleted or now holds no valid key: stop calling until it is fixed. */
  broken(error: SigningSecretError): void;
  /** The Loop's ServiceAccount may get the Secret but not list and watch it: rotations are not seen. */
  unwatchable(error: Error): void;
}

/**
 * Follows the Loop's signing Secret as the Loop's ServiceAccount (a watch of that one Secret), so a rotated
 * key is used from the next call without a restart. `initial`: the keys the Loop started with.
 */
export function watchSigningKeys(client: KubeClient, ref: SecretKeyRef, initial: SigningKeys, handlers: SigningKeyWatchHandlers): NamedObjectWatch<V1Secret> {
  let current = initial;
  return watchNamedObject<V1Secret>({
    client,
    resource: SECRETS,
    namespace: ref.namespace,
    name: ref.name,
    onForbidden: (error) => handlers.unwatchable(error),
    onChange: (secret) => {
      let keys: SigningKeys;
      try {
        keys = signingKeysFrom(secret, ref);
      } catch (error) {
        if (error instanceof SigningSecretError) handlers.broken(error);
        else throw error;
        return;
      }
      if (sameKeys(keys, current)) return;
      current = keys;
      handlers.rotated(keys);
    },
  });
}
