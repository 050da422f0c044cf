// `kubeloop certs rotate --ca` and `--drop-previous-ca`: the CA roll of certs/ca-roll.ts as the operator
// runs it, step by step on the Secret and the caBundles (replaced, not merged, so the old CA really leaves).
import { setTimeout as sleep } from 'node:timers/promises';
import { rollCa, updateCertificateSecret, withoutPreviousCas, withPrevious } from '../../certs/ca-roll.ts';
import type { InjectResult, WebhookConfigurationKind } from '../../certs/ca-bundle.ts';
import type { ServingIdentity } from '../../certs/generate.ts';
import { inspectCertificate, splitPemCertificates } from '../../certs/inspect.ts';
import { bundleFromSecret, readCertificateSecret, type SecretLocation } from '../../certs/secret-store.ts';
import type { KubeClient } from '../../lib/kube/index.ts';
import { describeInjection } from './certs-report.ts';

export interface CaRollOptions {
  /** true: roll to a new CA first; false: only drop the previous ones. */
  roll: boolean;
  overlapSeconds: number;
  name: string;
  retrying: <T>(operation: () => Promise<T>) => Promise<T>;
  /** Sets both kinds' caBundle to exactly this PEM. */
  caBundles: (caPem: string) => Promise<Record<WebhookConfigurationKind, InjectResult>>;
}

const fingerprints = (pem: string): string => splitPemCertificates(pem).map((c) => inspectCertificate(c).fingerprintSha256.slice(0, 23)).join(', ');

export async function rotateCa(client: KubeClient, location: SecretLocation, identity: ServingIdentity, options: CaRollOptions): Promise<number> {
  const { name, retrying } = options;
  const where = `Secret ${location.namespace}/${location.name}`;
  if (options.roll) {
    const stored = await retrying(() => readCertificateSecret(client, location));
    if (!stored) throw new Error(`${where} does not exist (the webhook creates it at start-up; or run kubeloop certs rotate)`);
    const rolled = await rollCa(bundleFromSecret(stored), identity, new Date());
    // The caBundles trust the new CA before any webhook can serve a certificate it signed.
    for (const line of describeInjection(name, await options.caBundles(rolled.ca.certPem))) console.log(line);
    const { before, after } = await retrying(() => updateCertificateSecret(client, location, (current) => withPrevious(rolled, current)));
    console.log(`${where}: new CA and serving certificate; trusted now: ${fingerprints(after.ca.certPem)} (was ${fingerprints(before.ca.certPem)})`);
    console.log(`overlap: both CAs trusted for ${options.overlapSeconds}s while every webhook replica swaps in the new certificate`);
    await sleep(options.overlapSeconds * 1000);
  }
  const { before, after } = await retrying(() => updateCertificateSecret(client, location, withoutPreviousCas));
  const dropped = splitPemCertificates(before.ca.certPem).length - splitPemCertificates(after.ca.certPem).length;
  console.log(`${where}: ${dropped > 0 ? `previous CA removed; trusted now: ${fingerprints(after.ca.certPem)}` : 'no previous CA to remove'}`);
  for (const line of describeInjection(name, await options.caBundles(after.ca.certPem))) console.log(line);
  return 0;
}
