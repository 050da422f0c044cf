// The certificate bundle kept in a kubernetes.io/tls Secret, shared by every webhook replica.
// ensureCertificate is create-if-absent and optimistic-concurrency renew: replicas racing at start-up
// all end up serving the one bundle that won the create (or the update).
import type { V1Secret } from '@kubernetes/client-node';
import { isApiError, type KubeClient } from '../lib/kube/index.ts';
import type { CertificateBundle, ServingIdentity } from './generate.ts';
import { DEFAULT_RENEWAL_POLICY, type RenewalPolicy } from './inspect.ts';
import { renewIfNeeded } from './renew.ts';

export const CA_CERT_KEY = 'ca.crt';
export const CA_KEY_KEY = 'ca.key';
export const TLS_CERT_KEY = 'tls.crt';
export const TLS_KEY_KEY = 'tls.key';

export interface SecretLocation {
  namespace: string;
  name: string;
}

export type EnsureAction = 'created' | 'loaded' | 'renewed' | 'adopted';

export interface EnsureResult {
  bundle: CertificateBundle;
  /** created: we won the create; adopted: another replica did (or renewed first); loaded: stored bundle was good. */
  action: EnsureAction;
  reasons: string[];
}

const decode = (value: string | undefined): string => (value ? Buffer.from(value, 'base64').toString('utf8') : '');
const encode = (value: string): string => Buffer.from(value, 'utf8').toString('base64');

export function bundleFromSecret(secret: V1Secret): CertificateBundle {
  const data = secret.data ?? {};
  return {
    ca: { certPem: decode(data[CA_CERT_KEY]), keyPem: decode(data[CA_KEY_KEY]) },
    serving: { certPem: decode(data[TLS_CERT_KEY]), keyPem: decode(data[TLS_KEY_KEY]) },
  };
}

/** `existing`: the Secret being replaced; its type is immutable, so an Opaque Secret stays Opaque. */
export function secretFromBundle(location: SecretLocation, bundle: CertificateBundle, existing?: V1Secret): V1Secret {
  const resourceVersion = existing?.metadata?.resourceVersion;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: location.name,
      namespace: location.namespace,
      labels: { 'app.kubernetes.io/part-of': 'kubeloop', 'app.kubernetes.io/component': 'webhook-certificate' },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    type: existing?.type ?? 'kubernetes.io/tls',
    data: {
      [CA_CERT_KEY]: encode(bundle.ca.certPem),
      [CA_KEY_KEY]: encode(bundle.ca.keyPem),
      [TLS_CERT_KEY]: encode(bundle.serving.certPem),
      [TLS_KEY_KEY]: encode(bundle.serving.keyPem),
    },
  };
}

const secretsPath = (namespace: string): string => `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
const secretPath = (location: SecretLocation): string => `${secretsPath(location.namespace)}/${encodeURIComponent(location.name)}`;

export function readCertificateSecret(client: KubeClient, location: SecretLocation): Promise<V1Secret | undefined> {
  return client.getIfExists<V1Secret>({ path: secretPath(location) });
}

export interface EnsureOptions {
  identity: ServingIdentity;
  now: () => Date;
  policy?: RenewalPolicy;
  /** Renew even if the stored bundle is still good (kubeloop certs rotate). */
  force?: boolean;
}

const MAX_ATTEMPTS = 8;

/**
 * Returns the bundle every replica should serve, creating or renewing the Secret when needed.
 * A lost race (409 on create or update) re-reads the Secret and uses the winner's bundle.
 */
export async function ensureCertificate(client: KubeClient, location: SecretLocation, options: EnsureOptions): Promise<EnsureResult> {
  let lostRace = false;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const secret = await readCertificateSecret(client, location);
    const now = options.now();
    if (!secret) {
      const { bundle } = await renewIfNeeded(undefined, options.identity, now, options.policy);
      try {
        await client.request({ method: 'POST', path: secretsPath(location.namespace), body: secretFromBundle(location, bundle) });
        return { bundle, action: 'created', reasons: ['missing'] };
      } catch (error) {
        if (!isApiError(error, 409)) throw error;
        lostRace = true;
        continue;
      }
    }
    const stored = bundleFromSecret(secret);
    const policy = options.policy ?? DEFAULT_RENEWAL_POLICY;
    // After a lost race the winner's bundle is fresh; a forced rotation is not repeated on top of it.
    const outcome = await renewIfNeeded(stored, options.identity, now, policy, options.force && !lostRace ? 'serving' : undefined);
    if (!outcome.changed) return { bundle: stored, action: lostRace ? 'adopted' : 'loaded', reasons: [] };
    try {
      await client.request({
        method: 'PUT',
        path: secretPath(location),
        body: secretFromBundle(location, outcome.bundle, secret),
      });
      return { bundle: outcome.bundle, action: 'renewed', reasons: outcome.reasons };
    } catch (error) {
      if (!isApiError(error, 409)) throw error;
      lostRace = true;
    }
  }
  throw new Error(`certificate Secret ${location.namespace}/${location.name}: still conflicting after ${MAX_ATTEMPTS} attempts`);
}
