// Reading certificates back: expiry, SANs, issuer, and the decision whether a stored bundle must be
// renewed (well before expiry, or when the wanted SANs changed, or when it does not hang together).
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import forge from 'node-forge';
import { servingHosts, type CertificateBundle, type ServingIdentity } from './generate.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface CertificateInfo {
  subject: string;
  issuer: string;
  serialNumber: string;
  notBefore: Date;
  notAfter: Date;
  isCa: boolean;
  /** DNS names and IP addresses from subjectAltName, in certificate order. */
  hosts: string[];
  fingerprintSha256: string;
}

export function inspectCertificate(certPem: string): CertificateInfo {
  const cert = forge.pki.certificateFromPem(certPem);
  const native = new X509Certificate(certPem);
  const san = cert.getExtension('subjectAltName') as { altNames?: { type: number; value?: string; ip?: string }[] } | null;
  const hosts = (san?.altNames ?? []).flatMap((n) => (n.type === 7 ? [n.ip ?? ''] : n.type === 2 ? [n.value ?? ''] : []));
  const constraints = cert.getExtension('basicConstraints') as { cA?: boolean } | null;
  return {
    subject: native.subject.replace(/\n/g, ', '),
    issuer: native.issuer.replace(/\n/g, ', '),
    serialNumber: cert.serialNumber,
    notBefore: cert.validity.notBefore,
    notAfter: cert.validity.notAfter,
    isCa: constraints?.cA === true,
    hosts: hosts.filter((h) => h !== ''),
    fingerprintSha256: native.fingerprint256,
  };
}

/** All certificates in a PEM bundle (a caBundle may hold the current CA and the one it replaces). */
export function splitPemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((c) => `${c}\n`) ?? [];
}

export interface RenewalPolicy {
  /** Renew when less than this fraction of the certificate's lifetime is left. */
  minRemainingFraction: number;
  /** ...or when less than this many days are left, whichever comes first. */
  minRemainingDays: number;
}

export const DEFAULT_RENEWAL_POLICY: RenewalPolicy = { minRemainingFraction: 1 / 3, minRemainingDays: 30 };

export type RenewalReason =
  | 'ca-unreadable'
  | 'ca-expiring'
  | 'serving-unreadable'
  | 'serving-expiring'
  | 'hosts-changed'
  | 'issuer-mismatch'
  | 'key-mismatch';

export interface RenewalDecision {
  /** A new CA is needed (and therefore a new serving certificate too). */
  renewCa: boolean;
  renewServing: boolean;
  reasons: RenewalReason[];
}

export function isExpiring(info: Pick<CertificateInfo, 'notBefore' | 'notAfter'>, now: Date, policy: RenewalPolicy): boolean {
  const lifetime = info.notAfter.getTime() - info.notBefore.getTime();
  const remaining = info.notAfter.getTime() - now.getTime();
  return remaining < lifetime * policy.minRemainingFraction || remaining < policy.minRemainingDays * DAY_MS;
}

function keyMatches(certPem: string, keyPem: string): boolean {
  try {
    const fromCert = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
    const fromKey = createPublicKey(createPrivateKey(keyPem)).export({ type: 'spki', format: 'der' });
    return fromCert.equals(fromKey);
  } catch {
    return false;
  }
}

function tryInspect(pem: string): CertificateInfo | undefined {
  try {
    return inspectCertificate(pem);
  } catch {
    return undefined;
  }
}

export function decideRenewal(
  bundle: CertificateBundle,
  identity: ServingIdentity,
  now: Date,
  policy: RenewalPolicy = DEFAULT_RENEWAL_POLICY,
): RenewalDecision {
  const reasons: RenewalReason[] = [];
  const ca = tryInspect(bundle.ca.certPem);
  if (!ca || !ca.isCa || !keyMatches(bundle.ca.certPem, bundle.ca.keyPem)) reasons.push('ca-unreadable');
  else if (isExpiring(ca, now, policy)) reasons.push('ca-expiring');
  const renewCa = reasons.length > 0;

  const serving = tryInspect(bundle.serving.certPem);
  if (!serving || !keyMatches(bundle.serving.certPem, bundle.serving.keyPem)) {
    reasons.push(serving ? 'key-mismatch' : 'serving-unreadable');
  } else {
    if (isExpiring(serving, now, policy)) reasons.push('serving-expiring');
    const wanted = [...servingHosts(identity)].sort();
    const have = [...new Set(serving.hosts)].sort();
    if (wanted.join(',') !== have.join(',')) reasons.push('hosts-changed');
    if (!renewCa && !new X509Certificate(bundle.serving.certPem).verify(new X509Certificate(bundle.ca.certPem).publicKey)) {
      reasons.push('issuer-mismatch');
    }
  }
  return { renewCa, renewServing: reasons.length > 0, reasons };
}
