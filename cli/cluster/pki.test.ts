import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createControlPlanePki } from './pki.ts';

describe('createControlPlanePki', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kubeloop-pki-test-'));
  // The RSA key cache lives under the kubeloop cache: keep the test's keys out of the real one.
  vi.stubEnv('KUBELOOP_CACHE_DIR', join(dir, 'cache'));
  afterAll(async () => {
    vi.unstubAllEnvs();
    await rm(dir, { recursive: true, force: true });
  });
  await Promise.all([mkdir(join(dir, 'pki')), mkdir(join(dir, 'pki2'))]);
  const pki = await createControlPlanePki(join(dir, 'pki'));
  const ca = new X509Certificate(pki.ca.certPem);

  it('issues an admin client certificate with CN=admin in group system:masters, signed by the CA', () => {
    const admin = new X509Certificate(pki.clients.admin.certPem);
    expect(admin.subject).toContain('CN=admin');
    expect(admin.subject).toContain('O=system:masters');
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(admin.checkIssued(ca)).toBe(true);
  });

  it('names the controller manager and scheduler as the users the bootstrap RBAC roles bind', () => {
    expect(new X509Certificate(pki.clients.controllerManager.certPem).subject).toBe('CN=system:kube-controller-manager');
    expect(new X509Certificate(pki.clients.scheduler.certPem).subject).toBe('CN=system:kube-scheduler');
  });

  it('serves the API server for 127.0.0.1 and the in-cluster kubernetes service names', async () => {
    const serving = new X509Certificate(await readFile(pki.apiserverCert, 'utf8'));
    expect(serving.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(serving.checkHost('kubernetes.default.svc')).toBe('kubernetes.default.svc');
    expect(serving.verify(ca.publicKey)).toBe(true);
  });

  it('makes fresh CA and service-account keys for every cluster, reusing only leaf keys', async () => {
    const again = await createControlPlanePki(join(dir, 'pki2'));
    expect(await readFile(again.caKey, 'utf8')).not.toBe(await readFile(pki.caKey, 'utf8'));
    expect(await readFile(again.serviceAccountKey, 'utf8')).not.toBe(await readFile(pki.serviceAccountKey, 'utf8'));
    expect(await readFile(again.apiserverKey, 'utf8')).toBe(await readFile(pki.apiserverKey, 'utf8'));
    expect(again.ca.certPem).not.toBe(pki.ca.certPem);
    const againCa = new X509Certificate(again.ca.certPem);
    expect(new X509Certificate(again.clients.admin.certPem).checkIssued(againCa)).toBe(true);
    // One cluster's certificates are not trusted by another's CA.
    expect(new X509Certificate(pki.clients.admin.certPem).verify(againCa.publicKey)).toBe(false);
  });

  it('signs tokens with an EC P-256 service-account key', async () => {
    const key = createPrivateKey(await readFile(pki.serviceAccountKey, 'utf8'));
    expect(key.asymmetricKeyType).toBe('ec');
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });

  it('gives etcd its own CA: a serving certificate for 127.0.0.1 and a client certificate for the API server only', async () => {
    const etcdCa = new X509Certificate(await readFile(pki.etcdCaCert, 'utf8'));
    const server = new X509Certificate(await readFile(pki.etcdServerCert, 'utf8'));
    const client = new X509Certificate(await readFile(pki.etcdClientCert, 'utf8'));
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.verify(etcdCa.publicKey)).toBe(true);
    expect(client.verify(etcdCa.publicKey)).toBe(true);
    expect(client.verify(ca.publicKey)).toBe(false);
    // The cluster's clients (admin included) cannot reach etcd with their certificates.
    for (const id of ['admin', 'kwok'] as const) expect(new X509Certificate(pki.clients[id].certPem).verify(etcdCa.publicKey)).toBe(false);
  });

  it('writes private keys readable by the owner only', async () => {
    for (const key of [pki.caKey, pki.apiserverKey, pki.serviceAccountKey, pki.etcdServerKey, pki.etcdClientKey]) {
      expect((await stat(key)).mode & 0o077).toBe(0);
    }
  });
});
