// What `kubeloop certs inject|rotate|show` prints about the caBundle of the Mutating- and the
// ValidatingWebhookConfiguration of one name: a kind that is absent is reported, not an error.
import { combineInjectResults, WEBHOOK_CONFIGURATION_KINDS, type InjectResult, type WebhookConfigurationKind } from '../../certs/ca-bundle.ts';

const NEITHER = (name: string): string => `neither a MutatingWebhookConfiguration nor a ValidatingWebhookConfiguration named ${name}`;

/** One line per kind ("absent" for a kind that does not exist), or one not-found line when neither does. */
export function describeInjection(name: string, results: Record<WebhookConfigurationKind, InjectResult>): string[] {
  if (combineInjectResults(Object.values(results)) === 'not-found') return [`caBundle of ${name}: not-found (${NEITHER(name)})`];
  return WEBHOOK_CONFIGURATION_KINDS.map((kind) => `caBundle of ${kind} ${name}: ${results[kind] === 'not-found' ? 'absent (none of this kind)' : results[kind]}`);
}

/** A configuration's caBundle against the Secret: absent, trusting every CA of the Secret, or not. */
export type CaBundleSync = 'absent' | 'in-sync' | 'differs';

export function describeSync(name: string, states: Record<WebhookConfigurationKind, CaBundleSync>): string[] {
  if (WEBHOOK_CONFIGURATION_KINDS.every((kind) => states[kind] === 'absent')) return [`caBundle of ${name}: not found (${NEITHER(name)})`];
  const text: Record<CaBundleSync, string> = {
    absent: 'absent (none of this kind)',
    'in-sync': 'in sync with the Secret',
    differs: 'DIFFERS from the Secret (run kubeloop certs inject)',
  };
  return WEBHOOK_CONFIGURATION_KINDS.map((kind) => `caBundle of ${kind} ${name}: ${text[states[kind]]}`);
}
