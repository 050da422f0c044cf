// The webhook's certificate lifecycle: at start-up make sure the shared Secret holds a good bundle and
// the caBundle is injected; then watch the Secret, so a bundle another replica (or `kubeloop certs rotate`)
// wrote is served within seconds, and every checkInterval renew when due; on a change hot-swap the serving
// certificate (no restart, no dropped requests) and re-inject the CA.
import type { Logger } from 'pino';
import type { V1Secret } from '@kubernetes/client-node';
import { SECRETS, watchNamedObject, type KubeClient, type NamedObjectWatch } from '../lib/kube/index.ts';
import type { CertificateBundle, KeyPairPem, ServingIdentity } from './generate.ts';
import { keepCaBundle, onlyDropsCas, type CaBundleKeeper } from './ca-bundle.ts';
import { inspectCertificate, type RenewalPolicy } from './inspect.ts';
import { bundleFromSecret, ensureCertificate, type EnsureResult, type SecretLocation } from './secret-store.ts';

export interface RotatorOptions {
  client: KubeClient;
  secret: SecretLocation;
  identity: ServingIdentity;
  /** MutatingWebhookConfiguration whose caBundle we own; omitted when cert-manager injects it. */
  configurationName?: string;
  /** The renewal check for expiry (hourly in the chart); changes by others are seen at once through the watch. */
  checkIntervalMs: number;
  policy?: RenewalPolicy;
  logger: Logger;
  now?: () => Date;
}

const sameBundle = (a: CertificateBundle, b: CertificateBundle): boolean =>
  a.ca.certPem === b.ca.certPem && a.ca.keyPem === b.ca.keyPem && a.serving.certPem === b.serving.certPem && a.serving.keyPem === b.serving.keyPem;

export class CertificateRotator {
  readonly #options: RotatorOptions;
  readonly #now: () => Date;
  readonly #swapHandlers = new Set<(serving: KeyPairPem) => void>();
  readonly #caHandlers = new Set<(caPem: string) => Promise<void> | void>();
  #bundle: CertificateBundle | undefined;
  #keeper: CaBundleKeeper | undefined;
  #timer: NodeJS.Timeout | undefined;
  #watch: NamedObjectWatch<V1Secret> | undefined;
  #checking: Promise<EnsureResult> | undefined;

  constructor(options: RotatorOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
  }

  get bundle(): CertificateBundle {
    if (!this.#bundle) throw new Error('CertificateRotator: start() has not completed');
    return this.#bundle;
  }

  /** Called with the new serving certificate whenever it changes (e.g. server.setServingCertificate). */
  onServingChanged(handler: (serving: KeyPairPem) => void): void {
    this.#swapHandlers.add(handler);
  }

  /**
   * Called with the CA PEM whenever it changes, a previous CA dropped included (certs rotate --ca; the serving
   * certificate may stay), and awaited before a serving certificate the new CA signed is swapped in.
   */
  onCaChanged(handler: (caPem: string) => Promise<void> | void): void {
    this.#caHandlers.add(handler);
  }

  /** Loads or creates the bundle and injects the CA; resolves with what to serve. */
  async start(): Promise<CertificateBundle> {
    const result = await this.check();
    if (this.#options.configurationName) {
      this.#keeper = keepCaBundle(this.#options.client, this.#options.configurationName, result.bundle.ca.certPem, this.#options.logger, this.#now);
      await this.#keeper.setCa(result.bundle.ca.certPem);
    }
    this.#timer = setInterval(() => {
      this.check().catch((error: unknown) => this.#options.logger.error({ err: error }, 'certificate check failed; will retry at the next interval'));
    }, this.#options.checkIntervalMs);
    this.#timer.unref();
    this.#watch = this.#watchSecret();
    return result.bundle;
  }

  /** A Secret that differs from what we serve (renewed elsewhere, deleted, edited) is checked at once. */
  #watchSecret(): NamedObjectWatch<V1Secret> {
    const { client, secret, logger } = this.#options;
    return watchNamedObject<V1Secret>({
      client,
      resource: SECRETS,
      namespace: secret.namespace,
      name: secret.name,
      logger,
      onForbidden: (error) => logger.warn({ err: error.message }, 'cannot watch the certificate Secret (grant list and watch on it): changes are seen at the periodic check only'),
      onChange: (stored) => {
        const recheck = (): Promise<unknown> | undefined => {
          const serving = this.#bundle;
          if (stored && serving && sameBundle(bundleFromSecret(stored), serving)) return undefined;
          return this.check();
        };
        // A change seen during a check may be newer than what that check read: compare once it ends.
        void (this.#checking ?? Promise.resolve())
          .catch(() => undefined)
          .then(recheck)
          .catch((error: unknown) => logger.error({ err: error }, 'certificate check after a Secret change failed; will retry at the next change or interval'));
      },
    });
  }

  /** One check: renew if due (or forced), adopt another replica's renewal, swap and re-inject on change. */
  async check(force = false): Promise<EnsureResult> {
    // Overlapping checks (timer + operator) share one round trip; a forced one runs after it.
    if (this.#checking) {
      if (!force) return this.#checking;
      await this.#checking.catch(() => undefined);
    }
    const checking = this.#check(force).finally(() => {
      if (this.#checking === checking) this.#checking = undefined;
    });
    this.#checking = checking;
    return checking;
  }

  async #check(force: boolean): Promise<EnsureResult> {
    const { client, secret, identity, policy, logger } = this.#options;
    const result = await ensureCertificate(client, secret, { identity, now: this.#now, force, ...(policy ? { policy } : {}) });
    const previous = this.#bundle;
    if (result.action !== 'loaded' || previous) {
      const info = inspectCertificate(result.bundle.serving.certPem);
      logger.info({ action: result.action, reasons: result.reasons, notAfter: info.notAfter.toISOString(), serial: info.serialNumber }, 'serving certificate checked');
    }
    // CA first: clients must trust the new issuer before they see a certificate it signed. Every periodic
    // check also re-checks the caBundle (one GET), in case a change slipped past the keeper's watch.
    // A CA dropped on purpose must leave the caBundle, which injecting (a merge) would never do.
    if (previous && onlyDropsCas(previous.ca.certPem, result.bundle.ca.certPem)) await this.#keeper?.replaceCa(result.bundle.ca.certPem);
    else if (previous) await this.#keeper?.setCa(result.bundle.ca.certPem);
    // The gateway's hook configurations likewise: they trust the new CA before a handshake can show its certificate.
    if (previous && previous.ca.certPem !== result.bundle.ca.certPem) {
      await Promise.all([...this.#caHandlers].map((handler) => handler(result.bundle.ca.certPem)));
    }
    if (previous && previous.serving.certPem !== result.bundle.serving.certPem) {
      for (const handler of this.#swapHandlers) handler(result.bundle.serving);
    }
    // Only now: if injecting the CA or swapping failed, the next check sees the difference and retries.
    this.#bundle = result.bundle;
    return result;
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#watch?.stop();
    await this.#checking?.catch(() => undefined);
    await this.#keeper?.stop();
  }
}
