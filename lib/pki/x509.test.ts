// The shared X.509 helpers: a CA that signs leaves Node's own X509 code verifies, with the asked-for
// subject, usages, SANs and validity window.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCaCertificate, DAY_MS, issueLeafCertificate, newRsaKey } from './x509.ts';

describe('x509', () => {
  it('issues a server leaf that its CA verifies, with IP and DNS SANs and a backdated validity window', async () => {
    const now = new Date('2030-01-02T03:04:05Z');
    const ca = createCaCertificate({ key: await newRsaKey(), subject: { commonName: 'test-ca', organizations: ['o1'] }, now, days: 10 });
    const leaf = issueLeafCertificate({
      key: await newRsaKey(),
      issuer: ca,
      subject: { commonName: 'svc' },
      now,
      days: 2,
      usage: 'server',
      hosts: ['svc.ns.svc', '127.0.0.1'],
    });
    const caCert = new X509Certificate(ca.certPem);
    const cert = new X509Certificate(leaf.certPem);
    expect(caCert.ca).toBe(true);
    expect(caCert.subject).toBe('CN=test-ca\nO=o1');
    expect(cert.ca).toBe(false);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(leaf.keyPem))).toBe(true);
    expect(cert.subjectAltName).toBe('DNS:svc.ns.svc, IP Address:127.0.0.1');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(new Date(cert.validTo).getTime() - new Date(cert.validFrom).getTime()).toBe(2 * DAY_MS + 5 * 60 * 1000);
  });

  it('issues a client leaf with clientAuth usage and no SANs', async () => {
    const now = new Date();
    const ca = createCaCertificate({ key: await newRsaKey(), subject: { commonName: 'ca' }, now, days: 1 });
    const leaf = issueLeafCertificate({ key: await newRsaKey(), issuer: ca, subject: { commonName: 'u', organizations: ['g'] }, now, days: 1, usage: 'client' });
    const cert = new X509Certificate(leaf.certPem);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.subjectAltName).toBeUndefined();
    expect(cert.subject).toBe('CN=u\nO=g');
  });
});
