import { X509Certificate } from 'node:crypto';
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

  it('reuses the cached keys but issues new certificates on the next start', async () => {
    const again = await createControlPlanePki(join(dir, 'pki2'));
    expect(await readFile(again.caKey, 'utf8')).toBe(await readFile(pki.caKey, 'utf8'));
    expect(again.ca.certPem).not.toBe(pki.ca.certPem);
    expect(new X509Certificate(again.clients.admin.certPem).checkIssued(new X509Certificate(again.ca.certPem))).toBe(true);
  });

  it('writes private keys readable by the owner only', async () => {
    for (const key of [pki.caKey, pki.apiserverKey, pki.serviceAccountKey]) {
      expect((await stat(key)).mode & 0o077).toBe(0);
    }
  });
});
