// A project's signed Loop on `kubeloop dev` and kubeloop/testing/cluster: init's loop.yaml names its signing
// Secret (spec.function.signingSecretRef) but holds no key, which is no file to commit. The Secret is made here
// when missing, as the user who applies the Loop, and its key handed to the local function, so a namespace
// admin's signed Loop runs without a manual step, as the README's kubectl line makes it in production.
import type { V1Secret } from '@kubernetes/client-node';
import { isApiError, type KubeClient } from '../../lib/kube/index.ts';
import { generateSigningSecret } from '../../lib/signing/webhook-signature.ts';

export interface SigningSecretRef {
  name: string;
  namespace: string;
  key: string;
}

/** The secret text ("whsec_...") the Secret holds under ref.key, creating the Secret with a fresh one when it does not exist. */
export async function ensureSigningSecret(client: KubeClient, ref: SigningSecretRef, say: (line: string) => void): Promise<string> {
  const secrets = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets`;
  const read = async () => client.getIfExists<V1Secret>({ path: `${secrets}/${encodeURIComponent(ref.name)}` });
  let live = await read();
  if (!live) {
    const secret = generateSigningSecret();
    const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name: ref.name, namespace: ref.namespace, labels: { 'app.kubernetes.io/managed-by': 'kubeloop-dev' } }, type: 'Opaque', stringData: { [ref.key]: secret } };
    try {
      await client.request({ method: 'POST', path: secrets, body });
      say(`created the signing Secret ${ref.namespace}/${ref.name} the Loop names (a fresh key under "${ref.key}"); the local function verifies calls with it`);
      return secret;
    } catch (error) {
      // Made meanwhile by someone else: use theirs.
      if (!isApiError(error, 409)) throw error;
      live = await read();
    }
  }
  const encoded = live?.data?.[ref.key];
  if (encoded === undefined) throw new Error(`the signing Secret ${ref.namespace}/${ref.name} the Loop names has no key "${ref.key}": add one (whsec_ and 32 random bytes in base64) or delete the Secret to have a fresh one made`);
  return Buffer.from(encoded, 'base64').toString('utf8');
}
