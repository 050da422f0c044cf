// PKI for the local control plane: a CA, the API server's serving certificate, client certificates
// (admin in system:masters, the controller manager, the scheduler, kwok), a separate etcd CA with etcd's
// serving and peer certificates and the API server's client certificate, and the service-account signing key pair.
// Certificates come from lib/pki/x509.ts. Both CA keys and the service-account key are fresh for every
// cluster; only leaf keys are reused from the cache (rsa-keys.ts), each certified by this cluster's CA.
import { generateKeyPair } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { createCaCertificate, issueLeafCertificate, newRsaKey, type CertKeyPem, type RsaKey } from '../../lib/pki/x509.ts';
import { API_SERVER_WEBHOOK_CLIENT_NAME } from '../../webhooks/index.ts';
import { cachedRsaKey } from './rsa-keys.ts';

export type { CertKeyPem };

const DEFAULT_DAYS = 365;

export interface CertificateRequest {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses for a serving certificate. */
  hosts?: string[];
  usage: 'server' | 'client' | 'peer';
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
  /** etcd's own CA: only certificates it signed may talk to etcd (client-cert-auth), not every cluster client. */
  etcdCaCert: string;
  etcdServerCert: string;
  etcdServerKey: string;
  /** etcd's peer certificate (serves and dials the peer port), from etcd's CA. */
  etcdPeerCert: string;
  etcdPeerKey: string;
  /** The API server's client certificate for etcd. */
  etcdClientCert: string;
  etcdClientKey: string;
  /** PEMs, for probing etcd's /health over mutual TLS. */
  etcdClient: CertKeyPem & { caPem: string };
  apiserverCert: string;
  apiserverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** Client certificate and key per identity, PEM text (embedded into kubeconfigs). */
  clients: Record<ClientIdentity, CertKeyPem>;
  ca: CertKeyPem;
  /**
   * The aggregation layer's own CA (--requestheader-client-ca-file) and the client certificate the API
   * server presents to aggregated APIs (--proxy-client-*): a CA apart from the cluster's, so no ordinary
   * client certificate can pass for the front proxy and assert any user in X-Remote-User.
   */
  frontProxyCaCert: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

/** The name the front proxy's client certificate carries (--requestheader-allowed-names). */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

export type ClientIdentity = 'admin' | 'controllerManager' | 'scheduler' | 'kwok' | 'webhookClient';

const CLIENTS: Record<ClientIdentity, { commonName: string; organizations?: string[] }> = {
  admin: { commonName: 'admin', organizations: ['system:masters'] },
  // The built-in RBAC bootstrap roles bind these exact user names.
  controllerManager: { commonName: 'system:kube-controller-manager' },
  scheduler: { commonName: 'system:kube-scheduler' },
  // kwok writes node and pod status, leases and events for every node: no narrower built-in role fits.
  kwok: { commonName: 'kwok', organizations: ['system:masters'] },
  // What kube-apiserver presents to admission webhooks (webhook-client-auth.ts): a name, no groups, no rights.
  webhookClient: { commonName: API_SERVER_WEBHOOK_CLIENT_NAME },
};

/**
 * The service-account token signing key: EC P-256 (ES256), which kube-apiserver and the controller manager
 * accept, made fresh in milliseconds, so tokens of one local cluster never verify on another.
 */
async function newServiceAccountKey(): Promise<RsaKey> {
  const { privateKey, publicKey } = await promisify(generateKeyPair)('ec', {
    namedCurve: 'prime256v1',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privatePem: privateKey, publicPem: publicKey };
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1'];

/** Creates the whole PKI under dir (mode 0600 keys) and returns the file paths and client PEMs. */
export async function createControlPlanePki(dir: string, extraServingHosts: readonly string[] = []): Promise<ControlPlanePki> {
  const ids = Object.keys(CLIENTS) as ClientIdentity[];
  // Fresh CA keys: a CA key shared by every local cluster would let anyone holding one cluster's ca.key
  // mint certificates every other one trusts. RSA because node-forge signs with RSA only.
  const [caKey, etcdCaKey, frontProxyCaKey, saKeys, servingKey, etcdServerKey, etcdPeerKey, etcdClientKey, frontProxyClientKey, ...clientKeys] = await Promise.all([
    newRsaKey(),
    newRsaKey(),
    newRsaKey(),
    newServiceAccountKey(),
    ...['apiserver', 'etcd-server', 'etcd-peer', 'apiserver-etcd-client', 'front-proxy-client', ...ids].map(cachedRsaKey),
  ]);
  const [ca, etcdCa, frontProxyCa] = await Promise.all([
    createCertificateAuthority('kubeloop-local-ca', caKey),
    createCertificateAuthority('kubeloop-local-etcd-ca', etcdCaKey),
    createCertificateAuthority('kubeloop-local-front-proxy-ca', frontProxyCaKey),
  ]);
  const [serving, etcdServer, etcdPeer, etcdClient, frontProxyClient, ...clientPems] = await Promise.all([
    issueCertificate(
      ca,
      {
        commonName: 'kube-apiserver',
        usage: 'server',
        hosts: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', '127.0.0.1', '10.0.0.1', ...extraServingHosts],
      },
      servingKey,
    ),
    issueCertificate(etcdCa, { commonName: 'etcd', usage: 'server', hosts: LOOPBACK_HOSTS }, etcdServerKey),
    issueCertificate(etcdCa, { commonName: 'etcd-peer', usage: 'peer', hosts: LOOPBACK_HOSTS }, etcdPeerKey),
    issueCertificate(etcdCa, { commonName: 'kube-apiserver-etcd-client', usage: 'client' }, etcdClientKey),
    issueCertificate(frontProxyCa, { commonName: FRONT_PROXY_CLIENT_NAME, usage: 'client' }, frontProxyClientKey),
    ...ids.map((id, i) => issueCertificate(ca, { ...CLIENTS[id], usage: 'client' }, clientKeys[i])),
  ]);
  if (!saKeys || !serving || !etcdServer || !etcdPeer || !etcdClient || !frontProxyClient) throw new Error('PKI generation returned too few keys');
  const clients = Object.fromEntries(ids.map((id, i) => [id, clientPems[i] as CertKeyPem])) as Record<ClientIdentity, CertKeyPem>;
  const paths = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    apiserverCert: join(dir, 'apiserver.crt'),
    apiserverKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
    etcdCaCert: join(dir, 'etcd-ca.crt'),
    etcdServerCert: join(dir, 'etcd-server.crt'),
    etcdServerKey: join(dir, 'etcd-server.key'),
    etcdPeerCert: join(dir, 'etcd-peer.crt'),
    etcdPeerKey: join(dir, 'etcd-peer.key'),
    etcdClientCert: join(dir, 'apiserver-etcd-client.crt'),
    etcdClientKey: join(dir, 'apiserver-etcd-client.key'),
    frontProxyCaCert: join(dir, 'front-proxy-ca.crt'),
    frontProxyClientCert: join(dir, 'front-proxy-client.crt'),
    frontProxyClientKey: join(dir, 'front-proxy-client.key'),
  };
  await Promise.all([
    writeFile(paths.caCert, ca.certPem),
    writeFile(paths.caKey, ca.keyPem, { mode: 0o600 }),
    writeFile(paths.apiserverCert, serving.certPem),
    writeFile(paths.apiserverKey, serving.keyPem, { mode: 0o600 }),
    writeFile(paths.serviceAccountKey, saKeys.privatePem, { mode: 0o600 }),
    writeFile(paths.serviceAccountPub, saKeys.publicPem),
    writeFile(paths.etcdCaCert, etcdCa.certPem),
    writeFile(paths.etcdServerCert, etcdServer.certPem),
    writeFile(paths.etcdServerKey, etcdServer.keyPem, { mode: 0o600 }),
    writeFile(paths.etcdPeerCert, etcdPeer.certPem),
    writeFile(paths.etcdPeerKey, etcdPeer.keyPem, { mode: 0o600 }),
    writeFile(paths.etcdClientCert, etcdClient.certPem),
    writeFile(paths.etcdClientKey, etcdClient.keyPem, { mode: 0o600 }),
    writeFile(paths.frontProxyCaCert, frontProxyCa.certPem),
    writeFile(paths.frontProxyClientCert, frontProxyClient.certPem),
    writeFile(paths.frontProxyClientKey, frontProxyClient.keyPem, { mode: 0o600 }),
  ]);
  return { ...paths, clients, ca, etcdClient: { ...etcdClient, caPem: etcdCa.certPem } };
}
