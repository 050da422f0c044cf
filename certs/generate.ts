// Pure certificate generation for the admission webhook: a self-signed CA and a serving certificate
// it signs, with the webhook's subjects, SANs and lifetimes; the X.509 work is lib/pki/x509.ts.
import forge from 'node-forge';
import { createCaCertificate, DAY_MS, issueLeafCertificate, newRsaKey, type CertKeyPem } from '../lib/pki/x509.ts';

/**
 * Two years: the CA rolls itself (a new CA, the old one trusted until it expires) once a third is left,
 * so a CA and its key are replaced every ~16 months instead of trusted for a decade.
 */
export const CA_LIFETIME_DAYS = 730;
export const SERVING_LIFETIME_DAYS = 365;

export type KeyPairPem = CertKeyPem;

/** The CA and the serving certificate it signed, as stored in the Secret and served by the webhook. */
export interface CertificateBundle {
  ca: KeyPairPem;
  serving: KeyPairPem;
}

export interface ServingIdentity {
  /** Service name in front of the webhook, e.g. "kubeloop-webhook". */
  service: string;
  /** Namespace of that Service. */
  namespace: string;
  /** Extra DNS names or IP addresses; 127.0.0.1 and localhost are always added for dev mode. */
  extraHosts?: string[];
}

/** The SANs a serving certificate for `identity` must carry, in a stable order. */
export function servingHosts(identity: ServingIdentity): string[] {
  const { service, namespace } = identity;
  const hosts = [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
    'localhost',
    '127.0.0.1',
    ...(identity.extraHosts ?? []),
  ];
  return [...new Set(hosts)];
}

export interface GenerateCaOptions {
  now: Date;
  commonName?: string;
  lifetimeDays?: number;
}

export async function generateCa(options: GenerateCaOptions): Promise<KeyPairPem> {
  return createCaCertificate({
    key: await newRsaKey(),
    subject: { commonName: options.commonName ?? 'kubeloop-webhook-ca', organizations: ['kubeloop'] },
    now: options.now,
    days: options.lifetimeDays ?? CA_LIFETIME_DAYS,
  });
}

export interface GenerateServingOptions {
  now: Date;
  ca: KeyPairPem;
  identity: ServingIdentity;
  lifetimeDays?: number;
}

export async function generateServingCert(options: GenerateServingOptions): Promise<KeyPairPem> {
  // Never outlive the CA: a leaf valid past its issuer fails verification in the gap.
  const caNotAfter = forge.pki.certificateFromPem(options.ca.certPem).validity.notAfter;
  const caLeftDays = (caNotAfter.getTime() - options.now.getTime()) / DAY_MS;
  const { service, namespace } = options.identity;
  return issueLeafCertificate({
    key: await newRsaKey(),
    issuer: options.ca,
    subject: { commonName: `${service}.${namespace}.svc` },
    now: options.now,
    days: Math.min(options.lifetimeDays ?? SERVING_LIFETIME_DAYS, caLeftDays),
    usage: 'server',
    hosts: servingHosts(options.identity),
  });
}

export interface GenerateBundleOptions {
  now: Date;
  identity: ServingIdentity;
  /** Keep this CA when it is still good, so serving certificates signed before and after both verify. */
  ca?: KeyPairPem;
}

export async function generateBundle(options: GenerateBundleOptions): Promise<CertificateBundle> {
  const ca = options.ca ?? (await generateCa({ now: options.now }));
  const serving = await generateServingCert({ now: options.now, ca, identity: options.identity });
  return { ca, serving };
}
