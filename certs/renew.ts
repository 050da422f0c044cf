// One pure step from "what is stored" to "what should be stored": keep a good bundle, renew the
// serving certificate under the same CA, or roll the CA while still trusting the one it replaces.
import { generateBundle, type CertificateBundle, type ServingIdentity } from './generate.ts';
import { DEFAULT_RENEWAL_POLICY, decideRenewal, inspectCertificate, splitPemCertificates, type RenewalPolicy, type RenewalReason } from './inspect.ts';

export interface RenewalOutcome {
  bundle: CertificateBundle;
  changed: boolean;
  reasons: RenewalReason[] | ['missing'] | ['forced'];
}

/**
 * The CA PEM may hold several certificates: the signing CA first, then earlier CAs that are still
 * valid, so serving certificates they signed keep verifying while replicas pick up the new one.
 */
function trustWithPrevious(newCaPem: string, previousCaPem: string, now: Date): string {
  const stillValid = splitPemCertificates(previousCaPem).filter((pem) => {
    try {
      return inspectCertificate(pem).notAfter.getTime() > now.getTime();
    } catch {
      return false;
    }
  });
  return [newCaPem, ...stillValid].join('');
}

export async function renewIfNeeded(
  existing: CertificateBundle | undefined,
  identity: ServingIdentity,
  now: Date,
  policy: RenewalPolicy = DEFAULT_RENEWAL_POLICY,
  /** 'serving': renew the serving certificate even if it is good (operator-requested rotation). */
  force?: 'serving',
): Promise<RenewalOutcome> {
  if (!existing) return { bundle: await generateBundle({ now, identity }), changed: true, reasons: ['missing'] };
  const decision = decideRenewal(existing, identity, now, policy);
  if (!decision.renewServing && force !== 'serving') return { bundle: existing, changed: false, reasons: [] };
  if (!decision.renewCa) {
    const reasons = decision.reasons.length > 0 ? decision.reasons : (['forced'] as ['forced']);
    return { bundle: await generateBundle({ now, identity, ca: existing.ca }), changed: true, reasons };
  }
  const fresh = await generateBundle({ now, identity });
  const certPem = trustWithPrevious(fresh.ca.certPem, existing.ca.certPem, now);
  return { bundle: { ca: { ...fresh.ca, certPem }, serving: fresh.serving }, changed: true, reasons: decision.reasons };
}
