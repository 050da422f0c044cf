// Reads the Standard Webhooks key(s) a Loop names (spec.function.signingSecretRef) from its Secret: one
// `whsec_` secret, or the new and the old one space-separated while the key is rotated; and follows it.
import type { V1Secret } from '@kubernetes/client-node';
import type { SecretKeyRef } from '../../api/loop.ts';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import { SECRETS, watchNamedObject, type NamedObjectWatch } from '../../lib/kube/named-object-watch.ts';
import { SigningSecretError, signingKeysFrom } from '../../lib/signing/secret-keys.ts';
import type { SigningKeys } from '../../lib/signing/webhook-signature.ts';

export { readSigningKeys, SigningSecretError, signingKeysFrom } from '../../lib/signing/secret-keys.ts';

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
