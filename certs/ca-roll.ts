// Replacing the webhook's CA on purpose (`kubeloop certs rotate --ca`: a CA key that may have leaked): a new
// CA signs a new serving certificate while the CA it replaces stays trusted for an overlap (replicas and the
// API server pick the new one up), then the old CA leaves the Secret and every caBundle. Unlike a renewal,
// older CAs are not carried along: the point is that nothing the old key signed verifies any more.
import type { V1Secret } from '@kubernetes/client-node';
import { isApiError, type KubeClient } from '../lib/kube/index.ts';
import { generateBundle, type CertificateBundle, type ServingIdentity } from './generate.ts';
import { splitPemCertificates } from './inspect.ts';
import { bundleFromSecret, readCertificateSecret, secretFromBundle, type SecretLocation } from './secret-store.ts';

/** A new CA and serving certificate; the CA PEM trusts the new CA first, then the one signing today (only that one). */
export async function rollCa(existing: CertificateBundle, identity: ServingIdentity, now: Date): Promise<CertificateBundle> {
  return withPrevious(await generateBundle({ now, identity }), existing);
}

/** `rolled`'s signing CA first, then the CA signing `existing` (a retry after a conflict re-reads it). */
export function withPrevious(rolled: CertificateBundle, existing: CertificateBundle): CertificateBundle {
  const [signing] = splitPemCertificates(rolled.ca.certPem);
  const [previous] = splitPemCertificates(existing.ca.certPem);
  const trusted = previous && previous !== signing ? (signing ?? '') + previous : (signing ?? rolled.ca.certPem);
  return { ...rolled, ca: { ...rolled.ca, certPem: trusted } };
}

/** The overlap is over: only the signing CA (the first) stays trusted. */
export function withoutPreviousCas(bundle: CertificateBundle): CertificateBundle {
  const [signing] = splitPemCertificates(bundle.ca.certPem);
  return { ...bundle, ca: { ...bundle.ca, certPem: signing ?? bundle.ca.certPem } };
}

/** Read, change, PUT with the resourceVersion read (a replica renewing at the same moment makes it re-read). */
export async function updateCertificateSecret(
  client: KubeClient,
  location: SecretLocation,
  change: (stored: CertificateBundle) => Promise<CertificateBundle> | CertificateBundle,
): Promise<{ before: CertificateBundle; after: CertificateBundle }> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const secret: V1Secret | undefined = await readCertificateSecret(client, location);
    if (!secret) throw new Error(`Secret ${location.namespace}/${location.name} does not exist (the webhook creates it at start-up; or run kubeloop certs rotate)`);
    const before = bundleFromSecret(secret);
    const after = await change(before);
    try {
      await client.request({ method: 'PUT', path: `/api/v1/namespaces/${encodeURIComponent(location.namespace)}/secrets/${encodeURIComponent(location.name)}`, body: secretFromBundle(location, after, secret) });
      return { before, after };
    } catch (error) {
      if (!isApiError(error, 409)) throw error;
    }
  }
  throw new Error(`Secret ${location.namespace}/${location.name}: still conflicting after 8 attempts`);
}
