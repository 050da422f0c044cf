// Writes the webhook configuration pairs the gateway owns (hook-configuration-shards.ts) by server-side
// apply, skipping a pair whose body is what it last wrote and nobody changed since (no PATCH when nothing
// changed), and deletes the tenant configurations no hook needs any more: those it wrote before, and those found by their label.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { isApiError, type KubeClient } from '../../lib/kube/index.ts';
import { counter } from '../../lib/observability/metrics.ts';
import { configurationLabelSelector, type ConfigurationPair } from './hook-configuration-shards.ts';

const FIELD_MANAGER = 'kubeloop-admission-gateway';
export const CONFIGURATION_PATHS = {
  mutating: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  validating: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
};
export type ConfigurationType = keyof typeof CONFIGURATION_PATHS;
export const CONFIGURATION_TYPES: readonly ConfigurationType[] = ['mutating', 'validating'];
const TYPES = CONFIGURATION_TYPES;

/** What was last applied to one configuration: its body, and the resourceVersion the apply left. */
interface Written {
  text: string;
  resourceVersion: string | undefined;
}

export interface ConfigurationWriterOptions {
  client: KubeClient;
  logger: Logger;
  /** The cluster hooks' configurations: never deleted by pruning (the chart creates them). */
  clusterName: string;
  metrics?: Registry;
}

export class ConfigurationWriter {
  readonly #options: ConfigurationWriterOptions;
  /** "<type>/<name>" -> what was last applied, so an unchanged configuration is not written again. */
  readonly #written = new Map<string, Written>();
  /** Keys being applied now, and those of them someone else changed meanwhile (not remembered: written again next time). */
  readonly #applying = new Set<string>();
  readonly #changedWhileApplying = new Set<string>();
  /** Tenant configurations that exist (written by us, or found by label once at start). */
  readonly #existing = new Set<string>();
  #listed = false;
  readonly #writes;

  constructor(options: ConfigurationWriterOptions) {
    this.#options = options;
    this.#writes = options.metrics
      ? counter<'type' | 'result'>(options.metrics, 'kubeloop_admission_configuration_writes_total', 'Webhook configuration writes by the gateway, by type and result (applied, unchanged, deleted)', ['type', 'result'])
      : undefined;
  }

  /** Forgets what was written, so the next write asserts every configuration again (someone may have edited one). */
  forget(): void {
    this.#written.clear();
  }

  /**
   * A configuration's watch event (configuration-drift-watch.ts): true when someone else changed or deleted one
   * this writer applied, which it then forgets, so the next apply writes it again. Its own write's event carries the
   * resourceVersion its apply left; one that comes while the apply is still under way counts as a change, since
   * it may be someone else's (one more apply, a no-op for the API server when nothing differs).
   */
  changed(type: ConfigurationType, name: string, resourceVersion: string | undefined): boolean {
    const key = `${type}/${name}`;
    if (this.#applying.has(key)) {
      this.#changedWhileApplying.add(key);
      return true;
    }
    const written = this.#written.get(key);
    if (!written || (resourceVersion !== undefined && written.resourceVersion === resourceVersion)) return false;
    this.#written.delete(key);
    return true;
  }

  /** Applies the pairs (with `dryRun`, only the given types, as a dry run that is never remembered). */
  async apply(pairs: readonly ConfigurationPair[], dryRunTypes?: readonly ConfigurationType[]): Promise<void> {
    for (const pair of pairs) {
      for (const type of TYPES) {
        if (dryRunTypes && !dryRunTypes.includes(type)) continue;
        const body = pair[type];
        const key = `${type}/${pair.name}`;
        const text = JSON.stringify(body);
        if (!dryRunTypes && this.#written.get(key)?.text === text) {
          this.#writes?.inc({ type, result: 'unchanged' });
          continue;
        }
        this.#written.delete(key);
        if (!dryRunTypes) this.#applying.add(key);
        let applied: { metadata?: { resourceVersion?: string } } | undefined;
        let changedMeanwhile = false;
        try {
          applied = await this.#options.client.request({
            method: 'PATCH',
            path: `${CONFIGURATION_PATHS[type]}/${encodeURIComponent(pair.name)}`,
            query: { fieldManager: FIELD_MANAGER, force: true, ...(dryRunTypes ? { dryRun: 'All' } : {}) },
            contentType: 'application/apply-patch+yaml',
            body,
          });
        } finally {
          if (!dryRunTypes) this.#applying.delete(key);
          changedMeanwhile = this.#changedWhileApplying.delete(key);
        }
        if (dryRunTypes) continue;
        if (!changedMeanwhile) this.#written.set(key, { text, resourceVersion: applied?.metadata?.resourceVersion });
        this.#writes?.inc({ type, result: 'applied' });
        if (pair.name !== this.#options.clusterName) this.#existing.add(pair.name);
      }
    }
  }

  /** Deletes the tenant configurations not among `pairs` (a bucket left without hooks, or of an earlier bucket count). */
  async prune(pairs: readonly ConfigurationPair[]): Promise<void> {
    await this.#listOnce();
    const wanted = new Set(pairs.map((pair) => pair.name));
    for (const name of [...this.#existing]) {
      if (wanted.has(name) || name === this.#options.clusterName) continue;
      if (await this.#delete(name)) this.#existing.delete(name);
    }
  }

  /** Dev mode's unregister: every configuration written, the cluster pair included. */
  async deleteAll(): Promise<void> {
    await this.#listOnce();
    for (const name of [this.#options.clusterName, ...this.#existing]) await this.#delete(name, { stopping: true });
    this.#existing.clear();
    this.#written.clear();
  }

  async #delete(name: string, options: { stopping?: boolean } = {}): Promise<boolean> {
    let deleted = true;
    for (const type of TYPES) {
      this.#written.delete(`${type}/${name}`);
      try {
        await this.#options.client.request({ method: 'DELETE', path: `${CONFIGURATION_PATHS[type]}/${encodeURIComponent(name)}` });
        this.#writes?.inc({ type, result: 'deleted' });
      } catch (error) {
        if (isApiError(error, 404)) continue;
        deleted = false;
        // `kubeloop dev` runs the gateway as the chart's account, which may not delete the cluster pair: dev
        // deletes it itself once the gateway has stopped, so a stopping gateway's 403 is no news.
        if (options.stopping && isApiError(error, 403)) {
          this.#options.logger.info({ configuration: name, type }, 'may not delete this webhook configuration: it points at this stopped process until whoever registered it deletes it');
          continue;
        }
        this.#options.logger.warn({ err: error, configuration: name, type }, 'could not delete a webhook configuration no hook needs (chart: the gateway may delete its tenant configurations)');
      }
    }
    return deleted;
  }

  /** Tenant configurations left by an earlier run (found by their label); a 403 leaves only ours to prune. */
  async #listOnce(): Promise<void> {
    if (this.#listed) return;
    this.#listed = true;
    for (const type of TYPES) {
      try {
        const list = await this.#options.client.request<{ items?: Array<{ metadata?: { name?: string } }> }>({
          path: CONFIGURATION_PATHS[type],
          query: { labelSelector: configurationLabelSelector(this.#options.clusterName) },
        });
        for (const item of list.items ?? []) if (item.metadata?.name && item.metadata.name !== this.#options.clusterName) this.#existing.add(item.metadata.name);
      } catch (error) {
        this.#options.logger.warn({ err: error, type }, 'could not list webhook configurations: stale tenant configurations of an earlier run are not pruned');
      }
    }
  }
}
