// X.509 building blocks shared by the control-plane PKI (cli/cluster/pki.ts) and the webhook's CA and
// serving certificate (certs/generate.ts): RSA keys from Node's native crypto, node-forge for the
// certificate structure, signing done natively. Lifetimes, subjects and key caching stay with callers.
import { generateKeyPair as generateKeyPairCallback, randomBytes, sign } from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';

const generateKeyPair = promisify(generateKeyPairCallback);

export const RSA_BITS = 2048;
export const DAY_MS = 24 * 60 * 60 * 1000;
/** Backdate notBefore so a client whose clock is a little behind still accepts a fresh certificate. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

export interface RsaKey {
  privatePem: string;
  publicPem: string;
}

export interface CertKeyPem {
  certPem: string;
  keyPem: string;
}

export interface Subject {
  commonName: string;
  /** Kubernetes maps a client certificate's CN to the user name and each O to a group. */
  organizations?: string[];
}

export interface CertificateTerms {
  key: RsaKey;
  subject: Subject;
  now: Date;
  days: number;
}

export interface LeafTerms extends CertificateTerms {
  issuer: CertKeyPem;
  /** peer: both, for a member that serves and dials its own kind (an etcd peer). */
  usage: 'server' | 'client' | 'peer';
  /** DNS names and IP addresses (subjectAltName). */
  hosts?: string[];
}

/** A 2048-bit RSA key pair (PKCS#1 private, SPKI public); forge's pure-JS generator takes seconds. */
export async function newRsaKey(): Promise<RsaKey> {
  const { privateKey, publicKey } = await generateKeyPair('rsa', {
    modulusLength: RSA_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  return { privatePem: privateKey, publicPem: publicKey };
}

/** Positive 16-byte serial: the high bit cleared so DER does not read it as negative. */
export function newSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

export function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

/** The parts of a forge certificate that its own sign() sets; not all are in @types/node-forge. */
interface SignableCertificate {
  md: forge.md.MessageDigest;
  signatureOid: string;
  siginfo: { algorithmOid: string };
  tbsCertificate: forge.asn1.Asn1;
  signature: string;
}

/**
 * Same result as forge's cert.sign(key, sha256), but the RSA private-key operation runs in Node's
 * native crypto: forge's JavaScript RSA took seconds for the control plane's seven certificates.
 */
function signCertificate(cert: forge.pki.Certificate, keyPem: string): void {
  const c = cert as unknown as SignableCertificate;
  c.md = forge.md.sha256.create();
  c.signatureOid = c.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption as string;
  c.tbsCertificate = (forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }).getTBSCertificate(cert);
  const der = forge.asn1.toDer(c.tbsCertificate).getBytes();
  c.md.update(der);
  c.signature = sign('sha256', Buffer.from(der, 'binary'), keyPem).toString('binary');
}

function unsignedCertificate(terms: CertificateTerms): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(terms.key.publicPem);
  cert.serialNumber = newSerial();
  cert.validity.notBefore = new Date(terms.now.getTime() - CLOCK_SKEW_MS);
  cert.validity.notAfter = new Date(terms.now.getTime() + terms.days * DAY_MS);
  cert.setSubject([
    { name: 'commonName', value: terms.subject.commonName },
    ...(terms.subject.organizations ?? []).map((o) => ({ name: 'organizationName', value: o })),
  ]);
  return cert;
}

/** A self-signed CA certificate for `terms.key`. */
export function createCaCertificate(terms: CertificateTerms): CertKeyPem {
  const cert = unsignedCertificate(terms);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCertificate(cert, terms.key.privatePem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: terms.key.privatePem };
}

/** A serving or client certificate for `terms.key`, signed by `terms.issuer`. */
export function issueLeafCertificate(terms: LeafTerms): CertKeyPem {
  const caCert = forge.pki.certificateFromPem(terms.issuer.certPem);
  const cert = unsignedCertificate(terms);
  cert.setIssuer(caCert.subject.attributes);
  const hosts = terms.hosts ?? [];
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: terms.usage !== 'client', clientAuth: terms.usage !== 'server' },
    ...(hosts.length > 0
      ? [{ name: 'subjectAltName', altNames: hosts.map((h) => (isIpAddress(h) ? { type: 7, ip: h } : { type: 2, value: h })) }]
      : []),
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  signCertificate(cert, terms.issuer.keyPem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: terms.key.privatePem };
}
