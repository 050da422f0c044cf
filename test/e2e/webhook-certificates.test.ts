// Webhook certificates (certs/) against the real API server: one bundle however many replicas race to create or
// renew it, a caBundle that is put back when someone resets it, and rotation picked up by every replica;
// replicas merge caBundles when the Secret's CA is corrupt, and see a changed Secret through their watch.
// webhook-certificates-cli.test.ts runs `kubeloop certs` against the same set-up (webhook-certificates-harness.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { injectCaBundle, keepCaBundle } from '../../certs/ca-bundle.ts';
import type { KeyPairPem } from '../../certs/generate.ts';
import { splitPemCertificates } from '../../certs/inspect.ts';
import { CertificateRotator } from '../../certs/rotation.ts';
import { bundleFromSecret, ensureCertificate, readCertificateSecret } from '../../certs/secret-store.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import { eventually } from '../cluster/eventually.ts';
import type { ClusterSuite } from '../cluster/suite.ts';
import { caBundle, caBundleCertificates, identity, logger, resetConfiguration, startCertificatesSuite, stopCertificatesSuite } from './webhook-certificates-harness.ts';

const DAY = 24 * 60 * 60 * 1000;
let suite: ClusterSuite;
let clients: KubeClient[];
let configurationName: string;

beforeAll(async () => {
  ({ suite, clients, configurationName } = await startCertificatesSuite());
});

afterAll(stopCertificatesSuite);

describe('certificate Secret', () => {
  it('gives every one of five replicas starting at once the same certificate (one create wins, the rest adopt it)', async () => {
    const location = { namespace: suite.namespace, name: 'race-tls' };
    const results = await Promise.all(clients.map((client) => ensureCertificate(client, location, { identity, now: () => new Date() })));
    expect(results.filter((r) => r.action === 'created')).toHaveLength(1);
    const served = new Set(results.map((r) => r.bundle.serving.certPem));
    expect(served.size).toBe(1);
    const secret = await readCertificateSecret(clients[0]!, location);
    expect(secret?.type).toBe('kubernetes.io/tls');
    expect(bundleFromSecret(secret!).serving.certPem).toBe([...served][0]);
  });

  it('renews once when five replicas find the certificate due at the same time, keeping the CA', async () => {
    const location = { namespace: suite.namespace, name: 'renew-tls' };
    const first = await ensureCertificate(clients[0]!, location, { identity, now: () => new Date() });
    const later = () => new Date(Date.now() + 250 * DAY);
    const results = await Promise.all(clients.map((client) => ensureCertificate(client, location, { identity, now: later })));
    expect(results.filter((r) => r.action === 'renewed')).toHaveLength(1);
    expect(new Set(results.map((r) => r.bundle.serving.certPem)).size).toBe(1);
    expect(results[0]?.bundle.serving.certPem).not.toBe(first.bundle.serving.certPem);
    expect(results[0]?.bundle.ca).toEqual(first.bundle.ca);
    expect(results.find((r) => r.action === 'renewed')?.reasons).toEqual(['serving-expiring']);
  });

  it('replaces a Secret whose contents are not a usable bundle', async () => {
    const location = { namespace: suite.namespace, name: 'broken-tls' };
    await clients[0]!.request({
      method: 'POST',
      path: `/api/v1/namespaces/${suite.namespace}/secrets`,
      body: { metadata: { name: 'broken-tls' }, type: 'Opaque', data: { 'tls.crt': Buffer.from('garbage').toString('base64') } },
    });
    const result = await ensureCertificate(clients[0]!, location, { identity, now: () => new Date() });
    expect(result.action).toBe('renewed');
    expect(result.reasons).toContain('ca-unreadable');
  });
});

describe('caBundle', () => {
  it('is injected, and put back by the keeper after someone resets it', async () => {
    const { bundle } = await ensureCertificate(clients[0]!, { namespace: suite.namespace, name: 'keeper-tls' }, { identity, now: () => new Date() });
    const expected = Buffer.from(bundle.ca.certPem).toString('base64');
    const keeper = keepCaBundle(clients[1]!, configurationName, bundle.ca.certPem, logger);
    try {
      expect(await keeper.setCa(bundle.ca.certPem)).toMatch(/updated|unchanged/);
      expect(await caBundle()).toBe(expected);
      // A helm upgrade or kubectl apply without caBundle resets it.
      await resetConfiguration();
      await eventually('the keeper to re-inject the caBundle', async () => (await caBundle()) === expected);
      expect(await injectCaBundle(clients[3]!, configurationName, bundle.ca.certPem)).toBe('unchanged');
    } finally {
      await keeper.stop();
    }
  });
});

describe('CertificateRotator', () => {
  it('renews when due, hot-swaps, and a second replica adopts the renewed certificate at its next check', async () => {
    const secret = { namespace: suite.namespace, name: 'rotate-tls' };
    // One clock per replica: b's Secret watch may start a check of its own at any moment (a late event
    // re-checks), and on a clock jumped for a it would do a's CA roll first. b's clock stops at the renewal.
    let offsetDays = 0;
    let offsetDaysB = 0;
    const make = (client: KubeClient, days: () => number) =>
      new CertificateRotator({ client, secret, identity, configurationName, checkIntervalMs: 3_600_000, logger, now: () => new Date(Date.now() + days() * DAY) });
    const a = make(clients[0]!, () => offsetDays);
    const b = make(clients[1]!, () => offsetDaysB);
    await resetConfiguration();
    const swappedA: KeyPairPem[] = [];
    const swappedB: KeyPairPem[] = [];
    a.onServingChanged((s) => swappedA.push(s));
    b.onServingChanged((s) => swappedB.push(s));
    try {
      const [startA, startB] = await Promise.all([a.start(), b.start()]);
      expect(startA.serving.certPem).toBe(startB.serving.certPem);
      expect(await caBundle()).toBe(Buffer.from(startA.ca.certPem).toString('base64'));

      offsetDays = offsetDaysB = 10;
      expect((await a.check()).action).toBe('loaded');
      expect(swappedA).toEqual([]);

      offsetDays = offsetDaysB = 300;
      const renewed = await a.check();
      expect(renewed.action).toBe('renewed');
      expect(swappedA.map((s) => s.certPem)).toEqual([renewed.bundle.serving.certPem]);
      const adopted = await b.check();
      expect(adopted.action).toBe('loaded');
      expect(swappedB.map((s) => s.certPem)).toEqual([renewed.bundle.serving.certPem]);
      // Same CA: the caBundle did not have to change and old connections still verify.
      expect(renewed.bundle.ca).toEqual(startA.ca);

      // Twenty months on the (two-year) CA itself is due: a new CA goes into the caBundle next to the old one.
      offsetDays = 600;
      const rolled = await a.check();
      expect(rolled.reasons).toContain('ca-expiring');
      const trusted = splitPemCertificates(rolled.bundle.ca.certPem);
      expect(trusted).toHaveLength(2);
      expect(trusted[0]).not.toBe(splitPemCertificates(startA.ca.certPem)[0]);
      expect(trusted[1]).toBe(splitPemCertificates(startA.ca.certPem)[0]);
      expect(await caBundle()).toBe(Buffer.from(rolled.bundle.ca.certPem).toString('base64'));
      expect(swappedA.at(-1)?.certPem).toBe(rolled.bundle.serving.certPem);
      // Replica b has not checked yet and still holds only the old CA: its keeper must not put that back
      // (the new caBundle already trusts it), or a's new certificate would stop verifying.
      expect(await injectCaBundle(clients[4]!, configurationName, startA.ca.certPem)).toBe('unchanged');
      expect(await caBundle()).toBe(Buffer.from(rolled.bundle.ca.certPem).toString('base64'));
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

describe('replicas sharing a certificate Secret', () => {
  it('merge caBundles when the Secret CA is corrupt, and serve the new bundle through their watch', async () => {
    const secret = { namespace: suite.namespace, name: 'corrupt-tls' };
    // The periodic check is an hour away: anything picked up below came through the watch.
    const make = (client: KubeClient) => new CertificateRotator({ client, secret, identity, configurationName, checkIntervalMs: 3_600_000, logger });
    await resetConfiguration();
    const a = make(clients[0]!);
    const swappedA: KeyPairPem[] = [];
    a.onServingChanged((s) => swappedA.push(s));
    const b = make(clients[1]!);
    try {
      const first = await a.start();
      const [oldCa] = splitPemCertificates(first.ca.certPem);
      expect(await caBundleCertificates()).toEqual([oldCa]);

      // The CA in the Secret is corrupted (a bad edit, a restore gone wrong): the next replica to start
      // makes a new CA, while replica a still serves a certificate signed by the old one.
      const stored = (await readCertificateSecret(clients[2]!, secret))!;
      stored.data = { ...stored.data, 'ca.crt': Buffer.from('not a certificate').toString('base64') };
      await clients[2]!.request({ method: 'PUT', path: `/api/v1/namespaces/${secret.namespace}/secrets/${secret.name}`, body: stored });
      const second = await b.start();
      const [newCa] = splitPemCertificates(second.ca.certPem);
      expect(newCa).not.toBe(oldCa);

      // Both CAs are trusted, the new one first: b's injection kept a's, and a's keeper has no reason to
      // put its old CA back alone (which would make b's certificate fail, and b's keeper undo it, in turn).
      expect(await caBundleCertificates()).toEqual([newCa, oldCa]);
      // a picks the new bundle up from its watch, within seconds, without a check being called.
      await eventually('replica a to serve the new certificate', async () => swappedA.at(-1)?.certPem === second.serving.certPem);
      expect(a.bundle.ca.certPem).toBe(second.ca.certPem);
      expect(await caBundleCertificates()).toEqual([newCa, oldCa]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('serves a rotation made by kubeloop certs rotate --force elsewhere within seconds', async () => {
    const secret = { namespace: suite.namespace, name: 'watched-tls' };
    const a = new CertificateRotator({ client: clients[0]!, secret, identity, checkIntervalMs: 3_600_000, logger });
    const swapped: KeyPairPem[] = [];
    a.onServingChanged((s) => swapped.push(s));
    try {
      await a.start();
      const forced = await ensureCertificate(clients[3]!, secret, { identity, now: () => new Date(), force: true });
      expect(forced.action).toBe('renewed');
      await eventually('the watch to swap in the forced certificate', async () => swapped.at(-1)?.certPem === forced.bundle.serving.certPem);
    } finally {
      await a.stop();
    }
  });
});
