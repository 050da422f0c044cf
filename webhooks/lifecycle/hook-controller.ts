// Keeps the gateway in step with the ClusterAdmissionHooks and namespaced AdmissionHooks: resolves each one,
// reviews what its ServiceAccount may read, starts the caches its context needs (never waiting for them),
// serves the ready ones, writes the webhook configurations it owns (the cluster pair and the tenants' bucketed
// pairs, hook-configuration-shards.ts; a hook the API server refuses is left out alone) and each hook's
// conditions through its own status chain.
import type { Logger } from 'pino';
import type { AdmissionHook } from '../../api/admission-hook.ts';
import { isApiError, type KubeClient, type ResourceInfo } from '../../lib/kube/index.ts';
import { assertApiServerReady } from '../../lib/kube/api-server-ready.ts';
import { objectKey } from '../../lib/kube/object-meta.ts';
import type { ConditionInput } from '../../lib/sdk/conditions.ts';
import type { Registry } from 'prom-client';
import { isNamespaceSent } from './namespace-safety.ts';
import type { ContextCache } from '../gateway/context-cache.ts';
import type { HookConfigurationOptions } from './hook-configuration.ts';
import { configurationLabelSelector, DEFAULT_MAX_CONFIGURATION_BYTES, DEFAULT_TENANT_CONFIGURATIONS, shardConfigurations, tenantBucket, tenantConfigurationName, type ShardOptions } from './hook-configuration-shards.ts';
import { ConfigurationWriter } from './hook-configuration-writer.ts';
import type { CallFailure } from '../gateway/hook-review.ts';
import { DEFAULT_HOOK_POLICY, resolveHook, type HookPolicy, type ResolvedHook } from '../base/hook-spec.ts';
import { HookStatusChains, STATUS_WRITE_TIMEOUT_MS } from './hook-status-chains.ts';
import { nextConditions, notReady, writeHookConditions } from './hook-status.ts';
import { decideRegistration, registeredVerdicts, type JudgedHook, type Verdicts } from './registration-decision.ts';
import { contextRefusal } from './hook-context-review.ts';
import { hookReviewPeriodMs } from './hook-access.ts';
import { NO_HOOKS, servedDuringUpdate, servedHooksOf, type ServedHooks } from './served-hooks.ts';
import { hookWriteRefusal } from './hook-write-review.ts';
import { watchHookRbac } from './hook-rbac-watch.ts';
import { watchConfigurationDrift, type ConfigurationDriftWatch } from './configuration-drift-watch.ts';
import type { RbacWatch } from '../../lib/kube/rbac-watch.ts';
import { CLUSTER_ADMISSION_HOOK_RESOURCE, informersOn, NAMESPACED_ADMISSION_HOOK_RESOURCE, type HookInformer, type HookInformerSource } from './hook-informers.ts';

export interface HookControllerOptions {
  /** Reviews, configuration and status writes go through it; the informers too, unless `informers` is given. */
  client: KubeClient;
  /** Where the hooks are read from; informers on `client` by default. */
  informers?: HookInformerSource;
  logger: Logger;
  contexts: ContextCache;
  configuration: Omit<HookConfigurationOptions, 'caBundlePem'>;
  /** The CA to inject, read at every write (it changes on a CA roll); undefined when cert-manager injects it. */
  caBundle: () => string | undefined;
  /** Serve only the hooks with these labels (several gateways, tests). */
  labelSelector?: string;
  /** Function URL rules and the sensitive resources hooks may intercept (--function-hosts, --hook-allow-resources). */
  policy?: HookPolicy;
  /** How often every hook is reviewed and every configuration written again whatever is watched (--access-review-seconds). */
  accessReviewIntervalMs?: number;
  /**
   * Review every hook again within about a second of any RBAC write (hook-rbac-watch.ts) and write back a configuration
   * someone else changed (configuration-drift-watch.ts); the periodic review is then hourly. Off in unit tests.
   */
  watchChanges?: boolean;
  /** Buckets of namespaces with their own configuration pair, and the bytes each may take (--tenant-configurations, --max-configuration-bytes). */
  tenantConfigurations?: { buckets: number; maxBytes: number };
  /** How long one status write may take (STATUS_WRITE_TIMEOUT_MS). */
  statusWriteTimeoutMs?: number;
  metrics?: Registry;
  /** AdmissionHooks served per namespace, oldest first (--tenant-max-hooks); 0 or undefined: no limit. */
  tenantMaxHooks?: number;
  now?: () => Date;
}

/** How long a dev-mode stop waits for its webhook configurations to be deleted. */
export const UNREGISTER_TIMEOUT_MS = 5_000;

export class HookController {
  /** The hooks the gateway serves (by identity, and namespaced ones by group); replaced whole on every reconcile. */
  served: ServedHooks = NO_HOOKS;
  readonly #informers: HookInformer[] = [];
  readonly #options: HookControllerOptions;
  /** The slot of each namespaced hook in its shape's entries, as last registered (hook-groups.ts). */
  #slots: ReadonlyMap<string, number> = new Map();
  readonly #failing = new Map<string, string>();
  #running: Promise<void> = Promise.resolve();
  #queued = false;
  #retry: NodeJS.Timeout | undefined;
  #review: NodeJS.Timeout | undefined;
  /** The RBAC watch once started (undefined: not watched); stop() waits for its start, so no request outlives the client. */
  #rbac: Promise<RbacWatch | undefined> | undefined;
  /** The configurations' watch once started, as #rbac. */
  #drift: Promise<ConfigurationDriftWatch | undefined> | undefined;
  #stopped = false;
  readonly #writer: ConfigurationWriter;
  readonly #status: HookStatusChains;
  readonly #shards: { buckets: number; maxBytes: number };

  constructor(options: HookControllerOptions) {
    this.#options = options;
    this.#shards = options.tenantConfigurations ?? { buckets: DEFAULT_TENANT_CONFIGURATIONS, maxBytes: DEFAULT_MAX_CONFIGURATION_BYTES };
    this.#writer = new ConfigurationWriter({ client: options.client, logger: options.logger, clusterName: options.configuration.name, ...(options.metrics ? { metrics: options.metrics } : {}) });
    this.#status = new HookStatusChains(options.logger);
    this.#watch(CLUSTER_ADMISSION_HOOK_RESOURCE);
  }

  /** The tenant configuration bucket of a namespace. */
  readonly #bucketOf = (namespace: string): number => tenantBucket(namespace, this.#shards.buckets);

  #watch(resource: ResourceInfo): void {
    const options = this.#options;
    const source = options.informers ?? informersOn(options.client);
    const informer = source(resource, {
      logger: options.logger.child({ component: 'admission-hooks', kind: resource.kind }),
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    });
    // Status writes bump resourceVersion but not generation: only spec and label changes need a reconcile.
    informer.on('add', () => this.schedule());
    informer.on('update', (hook, previous) => {
      if (hook.metadata?.generation !== previous.metadata?.generation) this.schedule();
    });
    informer.on('delete', () => this.schedule());
    this.#informers.push(informer);
  }

  get synced(): boolean {
    return this.#informers.every((informer) => informer.hasSynced);
  }

  /** The hooks of both kinds, as cached. */
  #list(): AdmissionHook[] {
    return this.#informers.flatMap((informer) => informer.store.list());
  }

  /** A hook by identity: "<namespace>/<name>" is an AdmissionHook, "<name>" a ClusterAdmissionHook. */
  #get(id: string): AdmissionHook | undefined {
    const informer = id.includes('/') ? this.#informers[1] : this.#informers[0];
    return informer?.store.get(id);
  }

  /** Starts watching ClusterAdmissionHooks and, unless their CRD is missing (`namespaced` false), AdmissionHooks. */
  async start(options: { namespaced?: boolean } = {}): Promise<void> {
    if (options.namespaced !== false && this.#informers.length === 1) this.#watch(NAMESPACED_ADMISSION_HOOK_RESOURCE);
    for (const informer of this.#informers) informer.start();
    await Promise.all(this.#informers.map((informer) => informer.waitForSync()));
    this.schedule();
    let watched = false;
    if (this.#options.watchChanges && !this.#stopped) {
      const onRegained = () => void this.#drift?.then((drift) => this.#reviewEvery(drift !== undefined));
      const rbac = await (this.#rbac = watchHookRbac({ ...this.#options, review: () => void this.schedule(), onLost: () => this.#reviewEvery(false), onRegained }));
      const drift = this.#stopped ? undefined : await (this.#drift = this.#watchConfigurations());
      watched = rbac !== undefined && drift !== undefined;
    }
    this.#reviewEvery(watched);
    await this.#running;
  }

  /** Periodically reviews again and writes every configuration again: hourly as a safety net while changes are watched, every 5 minutes else. */
  #reviewEvery(watched: boolean): void {
    clearInterval(this.#review);
    if (this.#stopped) return;
    this.#review = setInterval(() => {
      this.#writer.forget();
      void this.schedule();
    }, this.#options.accessReviewIntervalMs ?? hookReviewPeriodMs(watched)).unref();
  }

  #watchConfigurations(): Promise<ConfigurationDriftWatch | undefined> {
    const { client, logger, configuration, metrics } = this.#options;
    return watchConfigurationDrift({
      client,
      logger,
      ...(metrics ? { metrics } : {}),
      labelSelector: configurationLabelSelector(configuration.name),
      changed: (type, name, resourceVersion) => {
        if (!this.#writer.changed(type, name, resourceVersion)) return;
        logger.info({ configuration: name, type }, 'a webhook configuration of the gateway was changed by someone else: writing it again');
        void this.schedule();
      },
    });
  }

  /** Coalesces changes: at most one reconcile runs and one waits. */
  schedule(): Promise<void> {
    if (this.#queued || this.#stopped) return this.#running;
    this.#queued = true;
    this.#running = this.#running.then(async () => {
      this.#queued = false;
      await this.#reconcile().catch((error: unknown) => {
        this.#options.logger.error({ err: error }, 'admission hooks not registered; retrying in 5s');
        clearTimeout(this.#retry);
        this.#retry = setTimeout(() => void this.schedule(), 5000).unref();
      });
    });
    return this.#running;
  }

  /** Plan (judge every hook: reviews are I/O), decide (which are registered), carry out (serve, write, tell). */
  async #reconcile(): Promise<void> {
    // An API server still starting may deny a hook's review before its RBAC caches are filled: acted on, that would
    // unregister a serving hook and drop its context cache. Not ready, the reconcile fails and is retried as it was.
    await assertApiServerReady(this.#options.client);
    const cacheKeys = new Set<string>();
    const judged = await this.#judge(cacheKeys);
    const { ready, verdicts } = decideRegistration({ judged, slots: this.#slots, shards: this.#shardOptions(), ...(this.#options.tenantMaxHooks ? { tenantMaxHooks: this.#options.tenantMaxHooks } : {}) });
    await this.#register(ready, verdicts);
    await this.#options.contexts.retain(cacheKeys);
    this.#options.logger.info({ hooks: [...ready.keys()] }, 'admission hooks registered');
  }

  /** Resolves every hook and reviews what it may do; hooks are judged side by side, so one slow review never holds another. */
  #judge(cacheKeys: Set<string>): Promise<JudgedHook[]> {
    return Promise.all(
      this.#list().map(async (hook): Promise<JudgedHook> => {
        const resolution = resolveHook(hook, this.#options.policy ?? DEFAULT_HOOK_POLICY);
        if (!resolution.ok) return { hook, refusal: notReady(resolution.reason, resolution.message, hook.metadata?.generation) };
        const refusal = this.#namespaceRefusal(resolution.hook) ?? (await hookWriteRefusal(this.#options.client, resolution.hook)) ?? (await contextRefusal(resolution.hook, this.#options, cacheKeys));
        return { hook, resolved: resolution.hook, ...(refusal ? { refusal } : {}) };
      }),
    );
  }

  /** Serves the ready hooks, writes their configurations (leaving out a hook the API server refuses) and queues every hook's condition. */
  async #register(ready: Map<string, ResolvedHook>, verdicts: Verdicts): Promise<void> {
    // Serve before registering: the API server may call a new path as soon as the configuration lands.
    this.served = servedDuringUpdate(this.served, servedHooksOf(ready.values(), this.#slots, this.#bucketOf).served);
    try {
      await this.#applyIsolating(ready, verdicts);
    } catch (error) {
      const message = `the webhook configuration could not be written: ${error instanceof Error ? error.message : String(error)}`;
      for (const hook of this.#list()) if (!verdicts.has(hook)) verdicts.set(hook, { type: 'Ready', status: 'False', reason: 'ConfigurationFailed', message });
      this.#writeVerdicts(verdicts);
      throw error;
    }
    const { served, grouping } = servedHooksOf(ready.values(), this.#slots, this.#bucketOf);
    this.served = served;
    this.#slots = grouping.slots;
    const { name } = this.#options.configuration;
    const configurationOf = (hook: ResolvedHook) => (hook.namespace ? tenantConfigurationName(name, this.#bucketOf(hook.namespace)) : name);
    this.#writeVerdicts(registeredVerdicts(this.#list(), served, verdicts, (hook) => this.#options.contexts.pending(hook), configurationOf));
  }

  #shardOptions(): ShardOptions {
    const caBundlePem = this.#options.caBundle();
    return { ...this.#options.configuration, ...(caBundlePem ? { caBundlePem } : {}), ...this.#shards };
  }

  /** An AdmissionHook in a namespace never sent to any hook (kube-system, the gateway's, excluded) would see nothing. */
  #namespaceRefusal(hook: ResolvedHook): ConditionInput | undefined {
    if (!hook.namespace || isNamespaceSent(hook.namespace, this.#options.configuration)) return undefined;
    return notReady('NamespaceExcluded', `namespace ${hook.namespace} is never sent to admission hooks (kube-system, the gateway's own namespace and its --exclude-namespace, or outside --only-namespace): this hook would see nothing`, hook.generation);
  }

  /**
   * Writes the configurations. When the API server refuses them (a matchCondition that does not compile, a
   * selector it rejects), each hook is tried alone in a dry run: those refused are left out with InvalidSpec
   * and the API server's reason, and the others are registered, so one bad hook never blocks every hook.
   */
  async #applyIsolating(ready: Map<string, ResolvedHook>, verdicts: Verdicts): Promise<void> {
    try {
      await this.#applyConfigurations(ready.values());
      return;
    } catch (error) {
      if (!isApiError(error, 422) && !isApiError(error, 400)) throw error;
    }
    for (const hook of [...ready.values()]) {
      try {
        await this.#applyConfigurations([hook], [hook.spec.type]);
      } catch (error) {
        if (!isApiError(error, 422) && !isApiError(error, 400)) throw error;
        ready.delete(hook.id);
        const object = this.#get(hook.id);
        const message = `the API server refuses this hook's webhook: ${error instanceof Error ? error.message : String(error)}`;
        if (object) verdicts.set(object, notReady('InvalidSpec', message, hook.generation));
      }
    }
    await this.#applyConfigurations(ready.values());
  }

  /** Writes every configuration pair the hooks need and prunes the tenant ones no hook needs; with `dryRunTypes`, a dry run of those. */
  async #applyConfigurations(iterable: Iterable<ResolvedHook>, dryRunTypes?: ReadonlyArray<'mutating' | 'validating'>): Promise<void> {
    const { pairs } = shardConfigurations(iterable, this.#slots, this.#shardOptions());
    if (dryRunTypes) {
      // One hook tried alone: its own pair (the cluster pair for a cluster hook, its bucket's for a tenant's).
      await this.#writer.apply(pairs.filter((pair, i) => i > 0 || pairs.length === 1), dryRunTypes);
      return;
    }
    await this.#writer.apply(pairs);
    await this.#writer.prune(pairs);
  }

  /** Queues each verdict on its hook's status chain; nothing here waits for a status write. */
  #writeVerdicts(verdicts: Map<AdmissionHook, ConditionInput>): void {
    for (const [hook, verdict] of verdicts) this.#writeConditions(objectKey(hook.metadata), [verdict]);
  }

  /** Writes conditions on the hook as cached when its chain gets to it (only if a reader would see a change). */
  #writeConditions(hookId: string, conditions: ConditionInput[]): void {
    this.#status.enqueue(hookId, async () => {
      const hook = this.#get(hookId);
      if (!hook) return;
      const next = nextConditions(hook, conditions, (this.#options.now ?? (() => new Date()))());
      if (next) await writeHookConditions(this.#options.client, hook, next, this.#options.statusWriteTimeoutMs ?? STATUS_WRITE_TIMEOUT_MS);
    });
  }

  /**
   * Called after every function call: FunctionAvailable turns False on the first failure (with how it
   * failed) and True on the next success; only transitions and new failure reasons are written.
   */
  reportCall(hookId: string, failure: CallFailure | undefined): void {
    const before = this.#failing.get(hookId);
    const after = failure ? `${failure.kind}: ${failure.message}` : undefined;
    if (before === after || (before !== undefined && after !== undefined && before.split(':')[0] === after.split(':')[0])) return;
    if (after) this.#failing.set(hookId, after);
    else this.#failing.delete(hookId);
    this.reportCondition(
      hookId,
      failure
        ? { type: 'FunctionAvailable', status: 'False', reason: failure.kind, message: `the last call failed: the function ${failure.message}` }
        : { type: 'FunctionAvailable', status: 'True', reason: 'Answering', message: 'the function answers' },
    );
  }

  /** One condition of a hook (FunctionAvailable, a shadow's ShadowDiverged, a canary's CanaryRolledBack), written when it changed. */
  reportCondition(hookId: string, condition: ConditionInput): void {
    this.#writeConditions(hookId, [condition]);
  }

  /**
   * Stops watching; with `unregister` (dev mode) deletes the configurations too, waiting at most
   * UNREGISTER_TIMEOUT_MS: an API server that does not answer must not keep a stopping process alive.
   */
  async stop(options: { unregister?: boolean } = {}): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#review);
    await (await this.#rbac)?.stop();
    await (await this.#drift)?.stop();
    await this.#running;
    await this.#status.idle();
    await Promise.all(this.#informers.map((informer) => informer.stop()));
    if (options.unregister) await this.#unregister();
  }

  async #unregister(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), UNREGISTER_TIMEOUT_MS).unref()));
    try {
      const outcome = await Promise.race([this.#writer.deleteAll(), timedOut]);
      if (outcome === 'timeout') this.#options.logger.warn({ configuration: this.#options.configuration.name, timeoutMs: UNREGISTER_TIMEOUT_MS }, 'the webhook configurations were not deleted in time: delete them by hand (they point at this stopped process)');
    } finally {
      clearTimeout(timer);
    }
  }
}
