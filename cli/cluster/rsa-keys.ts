// Leaf RSA key pairs for the control-plane PKI. Generating eight 2048-bit keys took 2-7 s on a busy 2-core
// machine, most of a warm start's budget, so the harness reuses leaf keys cached (0600) under the kubeloop
// cache; certificates, and the CA keys that sign them (pki.ts), are made fresh for every cluster.
import { createPublicKey } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newRsaKey, type RsaKey } from '../../lib/pki/x509.ts';
import { cacheRoot } from './versions.ts';

/** The key cached under `name`, generated (and written atomically) on first use. */
export async function cachedRsaKey(name: string): Promise<RsaKey> {
  const dir = join(cacheRoot(), 'pki-keys');
  const path = join(dir, `${name}.key`);
  try {
    const privatePem = await readFile(path, 'utf8');
    return { privatePem, publicPem: createPublicKey(privatePem).export({ type: 'spki', format: 'pem' }).toString() };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = await newRsaKey();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, key.privatePem, { mode: 0o600 });
  await rename(tmp, path);
  return key;
}
