// Putting the CA into a Mutating- or ValidatingWebhookConfiguration's caBundle and keeping it there: an
// informer on that one configuration re-injects whenever someone (a Helm upgrade, kubectl apply) resets it.
import type { AdmissionregistrationV1WebhookClientConfig, V1MutatingWebhookConfiguration, V1ObjectMeta } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Informer, isApiError, type KubeClient, type ResourceInfo } from '../lib/kube/index.ts';
import { inspectCertificate, splitPemCertificates } from './inspect.ts';

export const MUTATING_WEBHOOK_CONFIGURATIONS: ResourceInfo = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  namespaced: false,
};

export const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceInfo = {
  ...MUTATING_WEBHOOK_CONFIGURATIONS,
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
};

export type WebhookConfigurationKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';
/** Both kinds, in the order they are reported. */
export const WEBHOOK_CONFIGURATION_KINDS: readonly WebhookConfigurationKind[] = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];
const RESOURCES: Record<WebhookConfigurationKind, ResourceInfo> = {
  MutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATIONS,
  ValidatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATIONS,
};

/** One configuration; a bare name means a MutatingWebhookConfiguration (the webhook's own --configuration). */
export type ConfigurationRef = string | { kind: WebhookConfigurationKind; name: string };

/** What the CA bundle code reads and writes of either kind: the webhooks' clientConfig.caBundle. */
export interface WebhookConfiguration {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  webhooks?: Array<{ clientConfig: AdmissionregistrationV1WebhookClientConfig }>;
}

/** Where configurations of a kind are listed and created. */
export const collectionPath = (kind: WebhookConfigurationKind): string => `/apis/admissionregistration.k8s.io/v1/${RESOURCES[kind].plural}`;
const refOf = (ref: ConfigurationRef): { kind: WebhookConfigurationKind; name: string } =>
  typeof ref === 'string' ? { kind: 'MutatingWebhookConfiguration', name: ref } : ref;
/** One configuration's API path. */
export const configurationPath = (ref: ConfigurationRef): string => `${collectionPath(refOf(ref).kind)}/${encodeURIComponent(refOf(ref).name)}`;

/** GETs a configuration; undefined when there is none of that kind and name. */
export function readWebhookConfiguration(client: KubeClient, ref: ConfigurationRef): Promise<WebhookConfiguration | undefined> {
  return client.getIfExists<WebhookConfiguration>({ path: configurationPath(ref) });
}

export type InjectResult = 'updated' | 'unchanged' | 'not-found';

/**
 * One result for a name injected into both kinds: a kind that does not exist is normal (a cluster may have
 * validating hooks only), so 'not-found' only when neither exists, 'updated' when either was changed.
 */
export function combineInjectResults(results: readonly InjectResult[]): InjectResult {
  if (results.includes('updated')) return 'updated';
  return results.some((r) => r !== 'not-found') ? 'unchanged' : 'not-found';
}

/** The certificates of a PEM bundle as whitespace-free base64 DER, for comparing bundles. */
function certificateBodies(pem: string): string[] {
  return splitPemCertificates(pem).map((c) => c.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''));
}

/**
 * A webhook needs our CA unless its caBundle already trusts every certificate of ours. "Contains", not
 * "equals": during a CA roll, a replica that has not yet picked up the new bundle holds only the old CA,
 * which the new caBundle (new CA + old CA) contains; it must not put its smaller bundle back.
 */
export function needsCaBundle(configuration: WebhookConfiguration, caPem: string): boolean {
  const ours = certificateBodies(caPem);
  return (configuration.webhooks ?? []).some((webhook) => {
    const configured = new Set(certificateBodies(Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8')));
    return ours.some((body) => !configured.has(body));
  });
}

/**
 * True when `next` trusts a strict subset of the CAs `previous` trusted: CAs were removed and none added
 * (the end of a certs rotate --ca overlap). A corrupt Secret replaced by a new CA adds one, so it merges.
 */
export function onlyDropsCas(previousPem: string, nextPem: string): boolean {
  const before = new Set(certificateBodies(previousPem));
  const after = certificateBodies(nextPem);
  return after.length < before.size && after.every((body) => before.has(body));
}

/** A caBundle keeps at most this many CAs: ours, then others still valid, newest injections first. */
export const MAX_TRUSTED_CAS = 4;

function isLiveCa(pem: string, now: Date): boolean {
  try {
    const info = inspectCertificate(pem);
    return info.isCa && info.notBefore.getTime() <= now.getTime() && info.notAfter.getTime() > now.getTime();
  } catch {
    return false;
  }
}

/**
 * Our CA certificates first, then those of the configured caBundle that are still-valid CAs and not ours
 * (at most MAX_TRUSTED_CAS in all). Merging, not replacing: when the Secret's CA is corrupt and a replica
 * makes a new one, a replica still serving a certificate from the old CA stays trusted until it picks up
 * the new bundle, instead of the two replicas overwriting each other's caBundle in turn.
 */
export function mergeCaBundles(ourPem: string, configuredPem: string, now: Date): string {
  const ours = splitPemCertificates(ourPem);
  const seen = new Set(certificateBodies(ourPem));
  const kept: string[] = [];
  for (const pem of splitPemCertificates(configuredPem)) {
    const [body] = certificateBodies(pem);
    if (body === undefined || seen.has(body) || !isLiveCa(pem, now)) continue;
    seen.add(body);
    kept.push(pem);
  }
  // Ours verbatim, so a caBundle without foreign CAs is byte for byte the Secret's ca.crt.
  return ourPem + kept.slice(0, Math.max(0, MAX_TRUSTED_CAS - ours.length)).join('');
}

/**
 * Adds our CA to the caBundle of every webhook of the configuration, keeping the other valid CAs there
 * (mergeCaBundles; read-modify-write with resourceVersion, retried on conflict).
 */
export async function injectCaBundle(client: KubeClient, configuration: ConfigurationRef, caPem: string, now: () => Date = () => new Date()): Promise<InjectResult> {
  const merged = (configured: string | undefined): string =>
    Buffer.from(mergeCaBundles(caPem, Buffer.from(configured ?? '', 'base64').toString('utf8'), now())).toString('base64');
  return writeCaBundles(client, configuration, (current) => needsCaBundle(current, caPem), merged);
}

/**
 * Sets every webhook's caBundle to exactly `caPem`, dropping whatever else it trusted: how a replaced CA
 * (certs rotate --ca) leaves the configuration, where injectCaBundle would keep it while still valid.
 */
export async function replaceCaBundle(client: KubeClient, configuration: ConfigurationRef, caPem: string): Promise<InjectResult> {
  const wanted = Buffer.from(caPem).toString('base64');
  return writeCaBundles(client, configuration, (current) => (current.webhooks ?? []).some((w) => w.clientConfig.caBundle !== wanted), () => wanted);
}

/** Read-modify-write of the caBundles with the resourceVersion read, retried on conflict. */
async function writeCaBundles(
  client: KubeClient,
  configuration: ConfigurationRef,
  needed: (current: WebhookConfiguration) => boolean,
  caBundle: (configured: string | undefined) => string,
): Promise<InjectResult> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const current = await readWebhookConfiguration(client, configuration);
    if (!current) return 'not-found';
    if (!needed(current)) return 'unchanged';
    const updated: WebhookConfiguration = {
      ...current,
      webhooks: (current.webhooks ?? []).map((w) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: caBundle(w.clientConfig.caBundle) } })),
    };
    try {
      // current.metadata.resourceVersion rides along: a concurrent writer makes this a 409, and we re-read.
      await client.request({ method: 'PUT', path: configurationPath(configuration), body: updated });
      return 'updated';
    } catch (error) {
      if (!isApiError(error, 409)) throw error;
    }
  }
  const { kind, name } = refOf(configuration);
  throw new Error(`${kind} ${name}: caBundle update still conflicting after 8 attempts`);
}

/** Injects into the Mutating- and the ValidatingWebhookConfiguration of one name (each through `inject`, so callers can retry per kind). */
export async function injectCaBundles(
  name: string,
  inject: (ref: { kind: WebhookConfigurationKind; name: string }) => Promise<InjectResult>,
): Promise<Record<WebhookConfigurationKind, InjectResult>> {
  const results = {} as Record<WebhookConfigurationKind, InjectResult>;
  for (const kind of WEBHOOK_CONFIGURATION_KINDS) results[kind] = await inject({ kind, name });
  return results;
}

export interface CaBundleKeeper {
  /** Changes the CA to keep injected (after a CA roll) and injects it now. */
  setCa(caPem: string): Promise<InjectResult>;
  /** Changes the CA and sets the caBundle to exactly it now: CAs were dropped on purpose (certs rotate --ca). */
  replaceCa(caPem: string): Promise<InjectResult>;
  stop(): Promise<void>;
}

/** Watches the one configuration by name and re-injects the CA whenever its caBundle drifts. */
export function keepCaBundle(client: KubeClient, name: string, initialCaPem: string, logger?: Logger, now: () => Date = () => new Date()): CaBundleKeeper {
  let caPem = initialCaPem;
  const informer = new Informer<V1MutatingWebhookConfiguration>({
    client,
    resource: MUTATING_WEBHOOK_CONFIGURATIONS,
    fieldSelector: `metadata.name=${name}`,
    ...(logger ? { logger } : {}),
  });
  let inFlight: Promise<InjectResult> = Promise.resolve('unchanged');
  // One injection at a time; a drift seen during one is re-checked by the next.
  const inject = (replace = false): Promise<InjectResult> => {
    inFlight = inFlight
      .catch(() => 'unchanged' as const)
      .then(() => (replace ? replaceCaBundle(client, name, caPem) : injectCaBundle(client, name, caPem, now)))
      .then((result) => {
        if (result === 'updated') logger?.info({ configuration: name }, 'caBundle injected');
        // The informer sees the configuration appear (chart install, dev-mode registration) and injects then.
        if (result === 'not-found') logger?.info({ configuration: name }, 'MutatingWebhookConfiguration not there yet; caBundle injected when it appears');
        return result;
      });
    inFlight.catch((error: unknown) => logger?.error({ err: error, configuration: name }, 'caBundle injection failed'));
    return inFlight;
  };
  const onChange = (configuration: V1MutatingWebhookConfiguration): void => {
    if (needsCaBundle(configuration, caPem)) void inject();
  };
  informer.on('add', onChange);
  informer.on('update', onChange);
  informer.start();
  return {
    setCa(next: string) {
      caPem = next;
      return inject();
    },
    replaceCa(next: string) {
      caPem = next;
      return inject(true);
    },
    stop: () => informer.stop(),
  };
}
