// Certificate generation, inspection and the renewal decision, with an injected clock.
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateBundle, generateCa, generateServingCert, servingHosts } from './generate.ts';
import { decideRenewal, inspectCertificate, splitPemCertificates } from './inspect.ts';
import { renewIfNeeded } from './renew.ts';
import { combineInjectResults, MAX_TRUSTED_CAS, mergeCaBundles, needsCaBundle } from './ca-bundle.ts';

const DAY = 24 * 60 * 60 * 1000;
const now = new Date('2026-01-01T00:00:00Z');
const identity = { service: 'kubeloop-webhook', namespace: 'kubeloop' };
const later = (days: number) => new Date(now.getTime() + days * DAY);

describe('generateBundle', () => {
  it('makes a 2-year CA and a 1-year RSA-2048 serving certificate it signed, with the Service SANs', async () => {
    const { ca, serving } = await generateBundle({ now, identity });
    const caInfo = inspectCertificate(ca.certPem);
    const servingInfo = inspectCertificate(serving.certPem);
    expect(caInfo.isCa).toBe(true);
    expect(Math.round((caInfo.notAfter.getTime() - now.getTime()) / DAY)).toBe(730);
    expect(servingInfo.isCa).toBe(false);
    expect(Math.round((servingInfo.notAfter.getTime() - now.getTime()) / DAY)).toBe(365);
    expect(servingInfo.hosts).toEqual([
      'kubeloop-webhook',
      'kubeloop-webhook.kubeloop',
      'kubeloop-webhook.kubeloop.svc',
      'kubeloop-webhook.kubeloop.svc.cluster.local',
      'localhost',
      '127.0.0.1',
    ]);
    const native = new X509Certificate(serving.certPem);
    expect(native.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(native.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(native.checkHost('kubeloop-webhook.kubeloop.svc')).toBe('kubeloop-webhook.kubeloop.svc');
    expect(native.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('never issues a serving certificate that outlives its CA', async () => {
    const ca = await generateCa({ now, lifetimeDays: 100 });
    const serving = await generateServingCert({ now, ca, identity });
    expect(inspectCertificate(serving.certPem).notAfter.getTime()).toBeLessThanOrEqual(
      inspectCertificate(ca.certPem).notAfter.getTime(),
    );
  });

  it('adds extra hosts once each', () => {
    expect(servingHosts({ ...identity, extraHosts: ['10.0.0.7', 'localhost'] }).filter((h) => h === 'localhost')).toHaveLength(1);
  });
});

describe('decideRenewal', () => {
  it('keeps a fresh bundle, renews the serving certificate when less than a third of its life is left', async () => {
    const bundle = await generateBundle({ now, identity });
    expect(decideRenewal(bundle, identity, later(200))).toEqual({ renewCa: false, renewServing: false, reasons: [] });
    expect(decideRenewal(bundle, identity, later(250))).toMatchObject({ renewCa: false, reasons: ['serving-expiring'] });
  });

  it('renews when less than 30 days are left even if that is more than a third of the life', async () => {
    const ca = await generateCa({ now });
    const serving = await generateServingCert({ now, ca, identity, lifetimeDays: 60 });
    expect(decideRenewal({ ca, serving }, identity, later(10)).reasons).toEqual([]);
    expect(decideRenewal({ ca, serving }, identity, later(35)).reasons).toEqual(['serving-expiring']);
  });

  it('renews when the wanted SANs differ from the certificate', async () => {
    const bundle = await generateBundle({ now, identity });
    expect(decideRenewal(bundle, { ...identity, namespace: 'other' }, now).reasons).toEqual(['hosts-changed']);
  });

  it('renews when the serving certificate was not signed by the stored CA, or its key does not match', async () => {
    const a = await generateBundle({ now, identity });
    const b = await generateBundle({ now, identity });
    expect(decideRenewal({ ca: a.ca, serving: b.serving }, identity, now).reasons).toEqual(['issuer-mismatch']);
    expect(decideRenewal({ ca: a.ca, serving: { certPem: a.serving.certPem, keyPem: b.serving.keyPem } }, identity, now).reasons).toEqual([
      'key-mismatch',
    ]);
  });

  it('replaces everything when the stored PEM is garbage', async () => {
    const a = await generateBundle({ now, identity });
    const decision = decideRenewal({ ca: { certPem: 'nope', keyPem: 'nope' }, serving: a.serving }, identity, now);
    expect(decision).toMatchObject({ renewCa: true, renewServing: true });
    expect(decision.reasons).toContain('ca-unreadable');
  });
});

describe('renewIfNeeded', () => {
  it('keeps the CA when renewing the serving certificate, so old and new serving certificates both verify', async () => {
    const first = await generateBundle({ now, identity });
    const outcome = await renewIfNeeded(first, identity, later(300));
    expect(outcome.changed).toBe(true);
    expect(outcome.bundle.ca).toEqual(first.ca);
    expect(outcome.bundle.serving.certPem).not.toEqual(first.serving.certPem);
    const caKey = new X509Certificate(first.ca.certPem).publicKey;
    expect(new X509Certificate(first.serving.certPem).verify(caKey)).toBe(true);
    expect(new X509Certificate(outcome.bundle.serving.certPem).verify(caKey)).toBe(true);
  });

  it('rolls an expiring CA but keeps trusting the previous one while it is valid', async () => {
    const first = await generateBundle({ now, identity });
    const outcome = await renewIfNeeded(first, identity, later(600));
    expect(outcome.reasons).toContain('ca-expiring');
    const trusted = splitPemCertificates(outcome.bundle.ca.certPem);
    expect(trusted).toHaveLength(2);
    expect(trusted[1]).toEqual(splitPemCertificates(first.ca.certPem)[0]);
    // The new serving certificate is signed by the first (new) CA in the bundle, and a later check is clean.
    expect(decideRenewal(outcome.bundle, identity, later(600)).reasons).toEqual([]);
  });

  it('does nothing to a good bundle', async () => {
    const first = await generateBundle({ now, identity });
    expect(await renewIfNeeded(first, identity, later(1))).toEqual({ bundle: first, changed: false, reasons: [] });
  });
});

describe('mergeCaBundles', () => {
  it('puts our CA first and keeps the other still-valid CAs of the caBundle, once each', async () => {
    const today = new Date();
    const [ours, other, expired] = await Promise.all([
      generateBundle({ now: today, identity }),
      generateBundle({ now: today, identity }),
      generateBundle({ now: new Date(today.getTime() - 11 * 365 * 24 * 3600 * 1000), identity }),
    ]);
    const configured = [other.ca.certPem, ours.ca.certPem, expired.ca.certPem, other.serving.certPem, 'garbage'].join('');
    expect(mergeCaBundles(ours.ca.certPem, configured, today)).toBe(ours.ca.certPem + splitPemCertificates(other.ca.certPem)[0]);
    expect(mergeCaBundles(ours.ca.certPem, '', today)).toBe(ours.ca.certPem);
  });

  it(`keeps at most ${MAX_TRUSTED_CAS} CAs, ours always`, async () => {
    const today = new Date();
    const bundles = await Promise.all(Array.from({ length: MAX_TRUSTED_CAS + 2 }, () => generateBundle({ now: today, identity })));
    const [ours, ...others] = bundles.map((b) => b.ca.certPem);
    const merged = splitPemCertificates(mergeCaBundles(ours!, others.join(''), today));
    expect(merged).toHaveLength(MAX_TRUSTED_CAS);
    expect(merged[0]).toBe(splitPemCertificates(ours!)[0]);
  });
});

describe('combineInjectResults', () => {
  it('is not-found only when no kind exists, updated when any kind was changed', () => {
    expect(combineInjectResults(['not-found', 'not-found'])).toBe('not-found');
    expect(combineInjectResults(['not-found', 'unchanged'])).toBe('unchanged');
    expect(combineInjectResults(['unchanged', 'not-found'])).toBe('unchanged');
    expect(combineInjectResults(['updated', 'not-found'])).toBe('updated');
    expect(combineInjectResults(['unchanged', 'updated'])).toBe('updated');
    expect(combineInjectResults([])).toBe('not-found');
  });
});

describe('needsCaBundle', () => {
  it('reads a ValidatingWebhookConfiguration as it reads a mutating one: every webhook must trust every CA of ours', async () => {
    const [ours, other] = await Promise.all([generateBundle({ now, identity }), generateBundle({ now, identity })]);
    const entry = (pem: string) => ({ name: 'v.kubeloop.dev', clientConfig: { url: 'https://x', caBundle: Buffer.from(pem).toString('base64') } });
    const validating = { kind: 'ValidatingWebhookConfiguration', webhooks: [entry(other.ca.certPem + ours.ca.certPem), entry(ours.ca.certPem)] };
    expect(needsCaBundle(validating, ours.ca.certPem)).toBe(false);
    expect(needsCaBundle({ ...validating, webhooks: [...validating.webhooks, entry(other.ca.certPem)] }, ours.ca.certPem)).toBe(true);
    expect(needsCaBundle({ kind: 'ValidatingWebhookConfiguration', webhooks: [] }, ours.ca.certPem)).toBe(false);
  });
});
