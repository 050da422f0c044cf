// cert-manager mode: the mounted certificate files are re-read and a changed pair is handed over.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../lib/observability/logger.ts';
import { readCertificateFiles, watchCertificateFiles } from './file-certificate.ts';
import { generateBundle, generateServingCert, type KeyPairPem } from './generate.ts';

const identity = { service: 'kubeloop-webhook', namespace: 'kubeloop' };

describe('watchCertificateFiles', () => {
  it('serves the files at start and hands over a pair that changed on disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kubeloop-certfiles-'));
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    const bundle = await generateBundle({ now: new Date(), identity });
    await writeFile(certFile, bundle.serving.certPem);
    await writeFile(keyFile, bundle.serving.keyPem);
    const changes: KeyPairPem[] = [];
    let notify: () => void = () => {};
    const changed = new Promise<void>((resolve) => (notify = resolve));
    const watch = await watchCertificateFiles({
      certFile,
      keyFile,
      pollIntervalMs: 20,
      logger: createLogger({ name: 'test', level: 'silent' }),
      onChanged: (pair) => {
        changes.push(pair);
        notify();
      },
    });
    try {
      expect(watch.serving).toEqual(bundle.serving);
      const renewed = await generateServingCert({ now: new Date(), ca: bundle.ca, identity });
      await writeFile(keyFile, renewed.keyPem);
      await writeFile(certFile, renewed.certPem);
      await changed;
      expect(changes.at(-1)).toEqual(renewed);
    } finally {
      watch.stop();
    }
  });

  it('refuses a key that does not belong to the certificate (files caught mid-update)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kubeloop-certfiles-'));
    const a = await generateBundle({ now: new Date(), identity });
    const b = await generateServingCert({ now: new Date(), ca: a.ca, identity });
    await writeFile(join(dir, 'tls.crt'), a.serving.certPem);
    await writeFile(join(dir, 'tls.key'), b.keyPem);
    await expect(readCertificateFiles(join(dir, 'tls.crt'), join(dir, 'tls.key'))).rejects.toThrow(/is not the private key/);
  });

  it('refuses a file that is not a certificate', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kubeloop-certfiles-'));
    await writeFile(join(dir, 'tls.crt'), 'not a certificate');
    await writeFile(join(dir, 'tls.key'), 'nor a key');
    await expect(readCertificateFiles(join(dir, 'tls.crt'), join(dir, 'tls.key'))).rejects.toThrow();
  });
});
