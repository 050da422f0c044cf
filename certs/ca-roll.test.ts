// The deliberate CA roll (kubeloop certs rotate --ca): which CAs the Secret trusts during and after the overlap.
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { onlyDropsCas } from './ca-bundle.ts';
import { rollCa, withoutPreviousCas, withPrevious } from './ca-roll.ts';
import { generateBundle } from './generate.ts';
import { splitPemCertificates } from './inspect.ts';

const now = new Date('2026-01-01T00:00:00Z');
const identity = { service: 'kubeloop-webhook', namespace: 'kubeloop' };

describe('rollCa', () => {
  it('signs a new serving certificate with a new CA and trusts exactly the new CA and the one it replaces', async () => {
    const old = await generateBundle({ now, identity });
    // A bundle still carrying an earlier CA from an automatic renewal: a deliberate roll does not carry it on.
    const earlier = await generateBundle({ now, identity });
    const existing = { ...old, ca: { ...old.ca, certPem: old.ca.certPem + earlier.ca.certPem } };
    const rolled = await rollCa(existing, identity, now);
    const [signing, previous, ...rest] = splitPemCertificates(rolled.ca.certPem);
    const [oldCa] = splitPemCertificates(old.ca.certPem);
    expect(previous).toBe(oldCa);
    expect(rest).toEqual([]);
    expect(signing).not.toBe(oldCa);
    expect(new X509Certificate(rolled.serving.certPem).verify(new X509Certificate(signing!).publicKey)).toBe(true);
    expect(new X509Certificate(rolled.serving.certPem).verify(new X509Certificate(old.ca.certPem).publicKey)).toBe(false);
  });

  it('keeps the same new CA when re-applied to a Secret another replica changed meanwhile, never trusting it twice', async () => {
    const old = await generateBundle({ now, identity });
    const rolled = await rollCa(old, identity, now);
    const renewedMeanwhile = await generateBundle({ now, identity, ca: old.ca });
    expect(withPrevious(rolled, renewedMeanwhile).ca.certPem).toBe(rolled.ca.certPem);
    expect(splitPemCertificates(withPrevious(rolled, rolled).ca.certPem)).toHaveLength(1);
  });
});

describe('withoutPreviousCas', () => {
  it('leaves only the signing CA once the overlap is over', async () => {
    const old = await generateBundle({ now, identity });
    const rolled = await rollCa(old, identity, now);
    const done = withoutPreviousCas(rolled);
    expect(splitPemCertificates(done.ca.certPem)).toEqual([splitPemCertificates(rolled.ca.certPem)[0]]);
    expect(done.serving).toEqual(rolled.serving);
    expect(done.ca.keyPem).toBe(rolled.ca.keyPem);
  });
});

describe('onlyDropsCas', () => {
  it('tells the end of an overlap (replace the caBundle) from a roll or a corrupt CA replaced (merge into it)', async () => {
    const old = await generateBundle({ now, identity });
    const rolled = await rollCa(old, identity, now);
    const stranger = await generateBundle({ now, identity });
    expect(onlyDropsCas(rolled.ca.certPem, withoutPreviousCas(rolled).ca.certPem)).toBe(true);
    expect(onlyDropsCas(old.ca.certPem, rolled.ca.certPem)).toBe(false);
    expect(onlyDropsCas(old.ca.certPem, stranger.ca.certPem)).toBe(false);
    expect(onlyDropsCas(old.ca.certPem, old.ca.certPem)).toBe(false);
  });
});
