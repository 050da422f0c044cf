// The webhook's certificate lifecycle: at start-up make sure the shared Secret holds a good bundle and
// the caBundle is injected; then every checkInterval renew when due, pick up a bundle another replica
// renewed, hot-swap the serving certificate (no restart, no dropped requests) and re-inject the CA.
import type { Logger } from 'pino';
import type { KubeClient } from '../lib/kube/index.ts';
import type { CertificateBundle, KeyPairPem, ServingIdentity } from './generate.ts';
import { keepCaBundle, type CaBundleKeeper } from './ca-bundle.ts';
import { inspectCertificate, type RenewalPolicy } from './inspect.ts';
import { ensureCertificate, type EnsureResult, type SecretLocation } from './secret-store.ts';

export interface RotatorOptions {
  client: KubeClient;
  secret: SecretLocation;
  identity: ServingIdentity;
  /** MutatingWebhookConfiguration whose caBundle we own; omitted when cert-manager injects it. */
  configurationName?: string;
  checkIntervalMs: number;
  policy?: RenewalPolicy;
  logger: Logger;
  now?: () => Date;
}

export class CertificateRotator {
  readonly #options: RotatorOptions;
  readonly #now: () => Date;
  readonly #swapHandlers = new Set<(serving: KeyPairPem) => void>();
  #bundle: CertificateBundle | undefined;
  #keeper: CaBundleKeeper | undefined;
  #timer: NodeJS.Timeout | undefined;
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

  /** Loads or creates the bundle and injects the CA; resolves with what to serve. */
  async start(): Promise<CertificateBundle> {
    const result = await this.check();
    if (this.#options.configurationName) {
      this.#keeper = keepCaBundle(this.#options.client, this.#options.configurationName, result.bundle.ca.certPem, this.#options.logger);
      await this.#keeper.setCa(result.bundle.ca.certPem);
    }
    this.#timer = setInterval(() => {
      this.check().catch((error: unknown) => this.#options.logger.error({ err: error }, 'certificate check failed; will retry at the next interval'));
    }, this.#options.checkIntervalMs);
    this.#timer.unref();
    return result.bundle;
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
    if (previous) await this.#keeper?.setCa(result.bundle.ca.certPem);
    if (previous && previous.serving.certPem !== result.bundle.serving.certPem) {
      for (const handler of this.#swapHandlers) handler(result.bundle.serving);
    }
    // Only now: if injecting the CA or swapping failed, the next check sees the difference and retries.
    this.#bundle = result.bundle;
    return result;
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#checking?.catch(() => undefined);
    await this.#keeper?.stop();
  }
}
