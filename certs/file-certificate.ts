// Serving certificate from mounted files (cert-manager mode): read at start, re-read periodically, and
// hand a changed pair to the server. Kubelet updates Secret volumes by swapping a symlink, so polling
// the content is more reliable than fs.watch.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { KeyPairPem } from './generate.ts';
import { inspectCertificate } from './inspect.ts';

export interface FileCertificateOptions {
  certFile: string;
  keyFile: string;
  pollIntervalMs: number;
  logger: Logger;
  onChanged: (serving: KeyPairPem) => void;
}

/** Reads the pair and checks the key belongs to the certificate (mid-update the files can disagree). */
export async function readCertificateFiles(certFile: string, keyFile: string): Promise<KeyPairPem> {
  const [certPem, keyPem] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
  inspectCertificate(certPem);
  if (!new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem))) {
    throw new Error(`${keyFile} is not the private key of the certificate in ${certFile}`);
  }
  return { certPem, keyPem };
}

/** Returns the current pair and a stop function for the polling loop. */
export async function watchCertificateFiles(options: FileCertificateOptions): Promise<{ serving: KeyPairPem; stop: () => void }> {
  let current = await readCertificateFiles(options.certFile, options.keyFile);
  const timer = setInterval(() => {
    readCertificateFiles(options.certFile, options.keyFile).then(
      (next) => {
        if (next.certPem === current.certPem && next.keyPem === current.keyPem) return;
        current = next;
        try {
          options.onChanged(next);
        } catch (error) {
          options.logger.error({ err: error }, 'could not swap in the new certificate files; keeping the current certificate');
        }
      },
      // Mid-swap the two files can disagree or be missing for a moment: keep serving and retry.
      (error: unknown) => options.logger.warn({ err: error }, 'could not re-read certificate files; keeping the current certificate'),
    );
  }, options.pollIntervalMs);
  timer.unref();
  return { serving: current, stop: () => clearInterval(timer) };
}
