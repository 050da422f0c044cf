// PKI for the local control plane, made with node-forge: a CA, the API server's serving certificate,
// client certificates (admin in system:masters, the controller manager, the scheduler, kwok) and the
// service-account signing key pair. Keys come from Node's native crypto (see rsa-keys.ts).
import { randomBytes, sign } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';
import { cachedRsaKey, newRsaKey, type RsaKey } from './rsa-keys.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface CertKeyPem {
  certPem: string;
  keyPem: string;
}

export interface CertificateRequest {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses for a serving certificate. */
  hosts?: string[];
  usage: 'server' | 'client';
  days?: number;
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
 * native crypto: forge's JavaScript RSA took seconds for the seven certificates on a busy machine.
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

function newSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

function setValidity(cert: forge.pki.Certificate, days: number): void {
  const now = Date.now();
  // Backdated a little: a client whose clock lags must not see a not-yet-valid certificate.
  cert.validity.notBefore = new Date(now - 5 * 60 * 1000);
  cert.validity.notAfter = new Date(now + days * DAY_MS);
}

function isIp(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.includes(':');
}

export async function createCertificateAuthority(commonName: string, key?: RsaKey): Promise<CertKeyPem> {
  const keys = key ?? (await newRsaKey());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicPem);
  cert.serialNumber = newSerial();
  setValidity(cert, 365);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCertificate(cert, keys.privatePem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privatePem };
}

export async function issueCertificate(ca: CertKeyPem, request: CertificateRequest, key?: RsaKey): Promise<CertKeyPem> {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const keys = key ?? (await newRsaKey());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicPem);
  cert.serialNumber = newSerial();
  setValidity(cert, request.days ?? 365);
  // Kubernetes maps a client certificate's CN to the user name and each O to a group.
  cert.setSubject([
    { name: 'commonName', value: request.commonName },
    ...(request.organizations ?? []).map((o) => ({ name: 'organizationName', value: o })),
  ]);
  cert.setIssuer(caCert.subject.attributes);
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    request.usage === 'server' ? { name: 'extKeyUsage', serverAuth: true } : { name: 'extKeyUsage', clientAuth: true },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ];
  const hosts = request.hosts ?? [];
  if (hosts.length > 0) {
    extensions.push({ name: 'subjectAltName', altNames: hosts.map((h) => (isIp(h) ? { type: 7, ip: h } : { type: 2, value: h })) });
  }
  cert.setExtensions(extensions);
  signCertificate(cert, ca.keyPem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privatePem };
}

/** Paths of everything the control-plane processes read. */
export interface ControlPlanePki {
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** Client certificate and key per identity, PEM text (embedded into kubeconfigs). */
  clients: Record<ClientIdentity, CertKeyPem>;
  ca: CertKeyPem;
}

export type ClientIdentity = 'admin' | 'controllerManager' | 'scheduler' | 'kwok';

const CLIENTS: Record<ClientIdentity, { commonName: string; organizations?: string[] }> = {
  admin: { commonName: 'admin', organizations: ['system:masters'] },
  // The built-in RBAC bootstrap roles bind these exact user names.
  controllerManager: { commonName: 'system:kube-controller-manager' },
  scheduler: { commonName: 'system:kube-scheduler' },
  // kwok writes node and pod status, leases and events for every node: no narrower built-in role fits.
  kwok: { commonName: 'kwok', organizations: ['system:masters'] },
};

/** Creates the whole PKI under dir (mode 0600 keys) and returns the file paths and client PEMs. */
export async function createControlPlanePki(dir: string): Promise<ControlPlanePki> {
  const ids = Object.keys(CLIENTS) as ClientIdentity[];
  const [caKey, servingKey, saKeys, ...clientKeys] = await Promise.all(['ca', 'apiserver', 'service-account', ...ids].map(cachedRsaKey));
  const ca = await createCertificateAuthority('kubeloop-local-ca', caKey);
  const [serving, ...clientPems] = await Promise.all([
    issueCertificate(
      ca,
      {
        commonName: 'kube-apiserver',
        usage: 'server',
        hosts: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', '127.0.0.1', '10.0.0.1'],
      },
      servingKey,
    ),
    ...ids.map((id, i) => issueCertificate(ca, { ...CLIENTS[id], usage: 'client' }, clientKeys[i])),
  ]);
  if (!saKeys || !serving) throw new Error('PKI generation returned too few keys');
  const clients = Object.fromEntries(ids.map((id, i) => [id, clientPems[i] as CertKeyPem])) as Record<ClientIdentity, CertKeyPem>;
  const paths = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    apiserverCert: join(dir, 'apiserver.crt'),
    apiserverKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
  await Promise.all([
    writeFile(paths.caCert, ca.certPem),
    writeFile(paths.caKey, ca.keyPem, { mode: 0o600 }),
    writeFile(paths.apiserverCert, serving.certPem),
    writeFile(paths.apiserverKey, serving.keyPem, { mode: 0o600 }),
    writeFile(paths.serviceAccountKey, saKeys.privatePem, { mode: 0o600 }),
    writeFile(paths.serviceAccountPub, saKeys.publicPem),
  ]);
  return { ...paths, clients, ca };
}
