// Keeps the gateway in step with the ClusterAdmissionHooks and namespaced AdmissionHooks: resolves each one,
// reviews what its ServiceAccount may read, starts the caches its context needs, serves the ready ones,
// writes the Mutating/ValidatingWebhookConfiguration it owns (server-side apply; a hook the API server
// refuses is left out alone; namespaced hooks share grouped entries) and each hook's conditions.
import type { Logger } from 'pino';
import {
  ADMISSION_HOOK_API_VERSION,
  ADMISSION_HOOK_GROUP,
  ADMISSION_HOOK_KIND,
  ADMISSION_HOOK_PLURAL,
  ADMISSION_HOOK_VERSION,
  CLUSTER_ADMISSION_HOOK_KIND,
  CLUSTER_ADMISSION_HOOK_PLURAL,
  type AdmissionHook,
} from '../api/admission-hook.ts';
import { reviewAccess } from '../lib/kube/access-review.ts';
import { Informer, isApiError, type KubeClient, type ResourceInfo } from '../lib/kube/index.ts';
import { objectKey } from '../lib/kube/object-meta.ts';
import type { ConditionInput } from '../lib/sdk/conditions.ts';
import { isNamespaceSent } from './configuration.ts';
import type { ContextCache } from './context-objects.ts';
import { buildHookConfigurations, type HookConfigurationOptions } from './hook-configuration.ts';
import type { CallFailure } from './hook-review.ts';
import { contextAccessChecks } from './hook-access.ts';
import { DEFAULT_HOOK_POLICY, resolveHook, type HookPolicy, type ResolvedHook } from './hook-spec.ts';
import { nextConditions, registeredCondition, writeHookConditions } from './hook-status.ts';
import { NO_HOOKS, servedDuringUpdate, servedHooksOf, type ServedHooks } from './served-hooks.ts';
import { createdAt, hooksOverTenantLimit, TENANT_HOOK_LIMIT_REASON } from './tenant-hook-limit.ts';
import { hookWriteRefusal } from './hook-write-review.ts';

export const CLUSTER_ADMISSION_HOOK_RESOURCE: ResourceInfo = {
  group: ADMISSION_HOOK_GROUP,
  version: ADMISSION_HOOK_VERSION,
  apiVersion: ADMISSION_HOOK_API_VERSION,
  kind: CLUSTER_ADMISSION_HOOK_KIND,
  plural: CLUSTER_ADMISSION_HOOK_PLURAL,
  namespaced: false,
};

export const NAMESPACED_ADMISSION_HOOK_RESOURCE: ResourceInfo = { ...CLUSTER_ADMISSION_HOOK_RESOURCE, kind: ADMISSION_HOOK_KIND, plural: ADMISSION_HOOK_PLURAL, namespaced: true };

const FIELD_MANAGER = 'kubeloop-admission-gateway';
const CONFIGURATION_PATHS = {
  mutating: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  validating: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
};

export interface HookControllerOptions {
  client: KubeClient;
  logger: Logger;
  contexts: ContextCache;
  configuration: Omit<HookConfigurationOptions, 'caBundlePem'>;
  /** The CA to inject, read at every write (it changes on a CA roll); undefined when cert-manager injects it. */
  caBundle: () => string | undefined;
  /** Serve only the hooks with these labels (several gateways, tests). */
  labelSelector?: string;
  /** Function URL rules and the sensitive resources hooks may intercept (--function-hosts, --hook-allow-resources). */
  policy?: HookPolicy;
  /** How often every hook's ServiceAccount rights are reviewed again (RBAC changes without any hook changing). */
  accessReviewIntervalMs?: number;
  /** AdmissionHooks served per namespace, oldest first (--tenant-max-hooks); 0 or undefined: no limit. */
  tenantMaxHooks?: number;
  now?: () => Date;
}

type Verdicts = Map<AdmissionHook, ConditionInput>;

const notReady = (reason: string, message: string, generation: number | undefined): ConditionInput => ({
  type: 'Ready',
  status: 'False',
  reason,
  message,
  ...(generation !== undefined ? { observedGeneration: generation } : {}),
});

export class HookController {
  /** The hooks the gateway serves (by identity, and namespaced ones by group); replaced whole on every reconcile. */
  served: ServedHooks = NO_HOOKS;
  readonly #informers: Array<Informer<AdmissionHook>> = [];
  readonly #options: HookControllerOptions;
  /** The slot of each namespaced hook in its shape's entries, as last registered (hook-groups.ts). */
  #slots: ReadonlyMap<string, number> = new Map();
  readonly #failing = new Map<string, string>();
  #running: Promise<void> = Promise.resolve();
  #queued = false;
  #retry: NodeJS.Timeout | undefined;
  #review: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: HookControllerOptions) {
    this.#options = options;
    this.#watch(CLUSTER_ADMISSION_HOOK_RESOURCE);
  }

  #watch(resource: ResourceInfo): void {
    const options = this.#options;
    const informer = new Informer<AdmissionHook>({
      client: options.client,
      resource,
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
    this.#review = setInterval(() => void this.schedule(), this.#options.accessReviewIntervalMs ?? 300_000).unref();
    await this.#running;
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

  async #reconcile(): Promise<void> {
    const { logger } = this.#options;
    const ready = new Map<string, ResolvedHook>();
    const verdicts: Verdicts = new Map();
    for (const hook of this.#list()) {
      const resolution = resolveHook(hook, this.#options.policy ?? DEFAULT_HOOK_POLICY);
      const refusal = resolution.ok
        ? (this.#namespaceRefusal(resolution.hook) ?? (await hookWriteRefusal(this.#options.client, resolution.hook)) ?? (await this.#contextRefusal(resolution.hook)))
        : notReady(resolution.reason, resolution.message, hook.metadata?.generation);
      if (refusal) verdicts.set(hook, refusal);
      else if (resolution.ok) ready.set(resolution.hook.id, resolution.hook);
    }
    this.#limitPerTenant(ready, verdicts);
    // Serve before registering: the API server may call a new path as soon as the configuration lands.
    this.served = servedDuringUpdate(this.served, servedHooksOf(ready.values(), this.#slots).served);
    const { name } = this.#options.configuration;
    try {
      await this.#applyIsolating(ready, verdicts);
    } catch (error) {
      const message = `the webhook configuration could not be written: ${error instanceof Error ? error.message : String(error)}`;
      for (const hook of this.#list()) if (!verdicts.has(hook)) verdicts.set(hook, { type: 'Ready', status: 'False', reason: 'ConfigurationFailed', message });
      await this.#writeVerdicts(verdicts);
      throw error;
    }
    const { served, grouping } = servedHooksOf(ready.values(), this.#slots);
    this.served = served;
    this.#slots = grouping.slots;
    for (const hook of this.#list()) {
      const resolved = served.byId.get(objectKey(hook.metadata));
      if (resolved && !verdicts.has(hook)) verdicts.set(hook, registeredCondition(resolved, name, hook.metadata?.generation));
    }
    await this.#writeVerdicts(verdicts);
    logger.info({ hooks: [...ready.keys()] }, 'admission hooks registered');
  }

  /** Leaves out each namespace's newest hooks past --tenant-max-hooks (tenant-hook-limit.ts). */
  #limitPerTenant(ready: Map<string, ResolvedHook>, verdicts: Verdicts): void {
    const max = this.#options.tenantMaxHooks;
    if (!max) return;
    for (const [id, message] of hooksOverTenantLimit(ready.values(), max, (hook) => createdAt(this.#get(hook.id)))) {
      const object = this.#get(id);
      ready.delete(id);
      if (object) verdicts.set(object, notReady(TENANT_HOOK_LIMIT_REASON, message, object.metadata?.generation));
    }
  }

  /** An AdmissionHook in a namespace never sent to any hook (kube-system, the gateway's, excluded) would see nothing. */
  #namespaceRefusal(hook: ResolvedHook): ConditionInput | undefined {
    if (!hook.namespace || isNamespaceSent(hook.namespace, this.#options.configuration)) return undefined;
    return notReady('NamespaceExcluded', `namespace ${hook.namespace} is never sent to admission hooks (kube-system, the gateway's own namespace and its --exclude-namespace, or outside --only-namespace): this hook would see nothing`, hook.generation);
  }

  /**
   * Why the hook may not be served its context: its ServiceAccount may not get a kind where the hook reads it
   * (Forbidden, checked before any cache of the kind starts), or the kind cannot be cached (ContextUnavailable).
   */
  async #contextRefusal(hook: ResolvedHook): Promise<ConditionInput | undefined> {
    const { contexts, client } = this.#options;
    if (hook.context.length === 0) return undefined;
    const unavailable = (error: unknown) => notReady('ContextUnavailable', `context objects cannot be cached: ${error instanceof Error ? error.message : String(error)}`, hook.generation);
    const resources = new Map<string, ResourceInfo>();
    try {
      for (const entry of hook.context) resources.set(entry.name, await contexts.resolve(entry.apiVersion, entry.kind));
    } catch (error) {
      return unavailable(error);
    }
    // An AdmissionHook reads context from its own namespace only: a cluster-scoped kind has no namespace.
    const clusterScoped = hook.namespace ? hook.context.find((entry) => !resources.get(entry.name)?.namespaced) : undefined;
    if (clusterScoped) {
      return notReady('InvalidSpec', `context "${clusterScoped.name}": ${clusterScoped.kind} (${clusterScoped.apiVersion}) is cluster-scoped; an AdmissionHook reads context only from its own namespace (${hook.namespace})`, hook.generation);
    }
    // A review that cannot be made (the API server does not answer) fails the whole reconcile, which is
    // retried with the configuration as it was: a blip never unregisters a hook that was serving.
    const checks = contextAccessChecks(hook.context, (entry) => resources.get(entry.name)!);
    const verdict = await reviewAccess(client, hook.spec.serviceAccount, checks, 'the hook is not registered and its function is sent nothing until that RBAC exists');
    if (!verdict.allowed) return notReady('Forbidden', verdict.message, hook.generation);
    try {
      for (const entry of hook.context) await contexts.ensure(entry.apiVersion, entry.kind);
      return undefined;
    } catch (error) {
      return unavailable(error);
    }
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

  /** Applies both configurations; with `dryRunTypes`, only those, as a dry run (to test one hook alone). */
  async #applyConfigurations(iterable: Iterable<ResolvedHook>, dryRunTypes?: ReadonlyArray<'mutating' | 'validating'>): Promise<void> {
    const hooks = [...iterable];
    const caBundlePem = this.#options.caBundle();
    const { grouping } = servedHooksOf(hooks, this.#slots);
    const built = buildHookConfigurations(hooks, { ...this.#options.configuration, ...(caBundlePem ? { caBundlePem } : {}) }, grouping.groups);
    for (const [type, body] of [['mutating', built.mutating], ['validating', built.validating]] as const) {
      if (dryRunTypes && !dryRunTypes.includes(type)) continue;
      await this.#options.client.request({
        method: 'PATCH',
        path: `${CONFIGURATION_PATHS[type]}/${encodeURIComponent(this.#options.configuration.name)}`,
        query: { fieldManager: FIELD_MANAGER, force: true, ...(dryRunTypes ? { dryRun: 'All' } : {}) },
        contentType: 'application/apply-patch+yaml',
        body,
      });
    }
  }

  async #writeVerdicts(verdicts: Map<AdmissionHook, ConditionInput>): Promise<void> {
    const now = (this.#options.now ?? (() => new Date()))();
    for (const [hook, verdict] of verdicts) {
      const next = nextConditions(hook, [verdict], now);
      if (next) await writeHookConditions(this.#options.client, hook, next).catch((error: unknown) => this.#options.logger.warn({ err: error, hook: objectKey(hook.metadata) }, 'could not write AdmissionHook status'));
    }
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
    const hook = this.#get(hookId);
    if (!hook) return;
    const next = nextConditions(hook, [condition], (this.#options.now ?? (() => new Date()))());
    if (next) void writeHookConditions(this.#options.client, hook, next).catch((error: unknown) => this.#options.logger.warn({ err: error, hook: hookId }, 'could not write AdmissionHook status'));
  }

  /** Stops watching; with `unregister` (dev mode) deletes the configurations too. */
  async stop(options: { unregister?: boolean } = {}): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#review);
    await this.#running;
    await Promise.all(this.#informers.map((informer) => informer.stop()));
    if (!options.unregister) return;
    for (const path of Object.values(CONFIGURATION_PATHS)) {
      await this.#options.client.request({ method: 'DELETE', path: `${path}/${encodeURIComponent(this.#options.configuration.name)}` }).catch((error: unknown) => {
        if (!isApiError(error, 404)) throw error;
      });
    }
  }
}
