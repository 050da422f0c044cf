// Pure certificate generation for the admission webhook: a self-signed CA and a serving certificate
// it signs. Keys come from Node's native RSA generator (forge's pure-JS one takes seconds); node-forge
// builds and signs the X.509 certificates.
import { generateKeyPair as generateKeyPairCallback, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import forge from 'node-forge';

const generateKeyPair = promisify(generateKeyPairCallback);

export const CA_LIFETIME_DAYS = 3650;
export const SERVING_LIFETIME_DAYS = 365;
export const RSA_BITS = 2048;
/** Backdate notBefore so a client whose clock is a little behind still accepts a fresh certificate. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

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

export function isIpAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

async function newRsaKey(): Promise<forge.pki.rsa.KeyPair> {
  const { privateKey } = await generateKeyPair('rsa', {
    modulusLength: RSA_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  });
  const forgePrivate = forge.pki.privateKeyFromPem(privateKey) as forge.pki.rsa.PrivateKey;
  const forgePublic = forge.pki.setRsaPublicKey(forgePrivate.n, forgePrivate.e);
  return { privateKey: forgePrivate, publicKey: forgePublic };
}

/** Positive 16-byte serial: the high bit cleared so DER does not read it as negative. */
function newSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function validity(cert: forge.pki.Certificate, now: Date, days: number): void {
  cert.validity.notBefore = new Date(now.getTime() - CLOCK_SKEW_MS);
  cert.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
}

export interface GenerateCaOptions {
  now: Date;
  commonName?: string;
  lifetimeDays?: number;
}

export async function generateCa(options: GenerateCaOptions): Promise<KeyPairPem> {
  const keys = await newRsaKey();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = newSerial();
  validity(cert, options.now, options.lifetimeDays ?? CA_LIFETIME_DAYS);
  const subject = [
    { name: 'commonName', value: options.commonName ?? 'kubeloop-webhook-ca' },
    { name: 'organizationName', value: 'kubeloop' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

export interface GenerateServingOptions {
  now: Date;
  ca: KeyPairPem;
  identity: ServingIdentity;
  lifetimeDays?: number;
}

export async function generateServingCert(options: GenerateServingOptions): Promise<KeyPairPem> {
  const caCert = forge.pki.certificateFromPem(options.ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(options.ca.keyPem);
  const keys = await newRsaKey();
  const hosts = servingHosts(options.identity);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = newSerial();
  // Never outlive the CA: a leaf valid past its issuer fails verification in the gap.
  const days = options.lifetimeDays ?? SERVING_LIFETIME_DAYS;
  const caLeftDays = (caCert.validity.notAfter.getTime() - options.now.getTime()) / DAY_MS;
  validity(cert, options.now, Math.min(days, caLeftDays));
  const { service, namespace } = options.identity;
  cert.setSubject([{ name: 'commonName', value: `${service}.${namespace}.svc` }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: hosts.map((host) => (isIpAddress(host) ? { type: 7, ip: host } : { type: 2, value: host })),
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
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
