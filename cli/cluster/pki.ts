// PKI for the local control plane: a CA, the API server's serving certificate, client certificates
// (admin in system:masters, the controller manager, the scheduler, kwok) and the service-account
// signing key pair. Certificates come from lib/pki/x509.ts; keys are cached (see rsa-keys.ts).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createCaCertificate, issueLeafCertificate, newRsaKey, type CertKeyPem, type RsaKey } from '../../lib/pki/x509.ts';
import { cachedRsaKey } from './rsa-keys.ts';

export type { CertKeyPem };

const DEFAULT_DAYS = 365;

export interface CertificateRequest {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses for a serving certificate. */
  hosts?: string[];
  usage: 'server' | 'client';
  days?: number;
}

export async function createCertificateAuthority(commonName: string, key?: RsaKey): Promise<CertKeyPem> {
  return createCaCertificate({ key: key ?? (await newRsaKey()), subject: { commonName }, now: new Date(), days: DEFAULT_DAYS });
}

export async function issueCertificate(ca: CertKeyPem, request: CertificateRequest, key?: RsaKey): Promise<CertKeyPem> {
  const { commonName, organizations, hosts, usage, days } = request;
  return issueLeafCertificate({
    key: key ?? (await newRsaKey()),
    issuer: ca,
    subject: { commonName, organizations },
    now: new Date(),
    days: days ?? DEFAULT_DAYS,
    usage,
    hosts,
  });
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
