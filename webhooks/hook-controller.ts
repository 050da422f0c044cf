// Keeps the gateway in step with the AdmissionHooks: resolves each one, reviews what its ServiceAccount may
// read, starts the caches its context needs, serves the ready ones, writes the Mutating/Validating-
// WebhookConfiguration it owns (server-side apply; a hook the API server refuses is left out alone) and
// each hook's conditions.
import type { Logger } from 'pino';
import { ADMISSION_HOOK_API_VERSION, ADMISSION_HOOK_GROUP, ADMISSION_HOOK_VERSION, CLUSTER_ADMISSION_HOOK_KIND, CLUSTER_ADMISSION_HOOK_PLURAL, type AdmissionHook } from '../api/admission-hook.ts';
import { reviewAccess } from '../lib/kube/access-review.ts';
import { Informer, isApiError, type KubeClient, type ResourceInfo } from '../lib/kube/index.ts';
import type { ConditionInput } from '../lib/sdk/conditions.ts';
import type { ContextCache } from './context-objects.ts';
import { buildHookConfigurations, type HookConfigurationOptions } from './hook-configuration.ts';
import type { CallFailure } from './hook-review.ts';
import { contextAccessChecks } from './hook-access.ts';
import { DEFAULT_HOOK_POLICY, resolveHook, type HookPolicy, type ResolvedHook } from './hook-spec.ts';
import { nextConditions, writeHookConditions } from './hook-status.ts';

export const ADMISSION_HOOK_RESOURCE: ResourceInfo = {
  group: ADMISSION_HOOK_GROUP,
  version: ADMISSION_HOOK_VERSION,
  apiVersion: ADMISSION_HOOK_API_VERSION,
  kind: CLUSTER_ADMISSION_HOOK_KIND,
  plural: CLUSTER_ADMISSION_HOOK_PLURAL,
  namespaced: false,
};

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
  /** Serve only the AdmissionHooks with these labels (several gateways, tests). */
  labelSelector?: string;
  /** Function URL rules and the sensitive resources hooks may intercept (--function-hosts, --hook-allow-resources). */
  policy?: HookPolicy;
  /** How often every hook's ServiceAccount rights are reviewed again (RBAC changes without any hook changing). */
  accessReviewIntervalMs?: number;
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
  /** The hooks the gateway serves, by name; replaced whole on every reconcile. */
  hooks = new Map<string, ResolvedHook>();
  readonly #informer: Informer<AdmissionHook>;
  readonly #options: HookControllerOptions;
  readonly #failing = new Map<string, string>();
  #running: Promise<void> = Promise.resolve();
  #queued = false;
  #retry: NodeJS.Timeout | undefined;
  #review: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(options: HookControllerOptions) {
    this.#options = options;
    this.#informer = new Informer<AdmissionHook>({
      client: options.client,
      resource: ADMISSION_HOOK_RESOURCE,
      logger: options.logger.child({ component: 'admission-hooks' }),
      ...(options.labelSelector ? { labelSelector: options.labelSelector } : {}),
    });
    // Status writes bump resourceVersion but not generation: only spec and label changes need a reconcile.
    this.#informer.on('add', () => this.schedule());
    this.#informer.on('update', (hook, previous) => {
      if (hook.metadata?.generation !== previous.metadata?.generation) this.schedule();
    });
    this.#informer.on('delete', () => this.schedule());
  }

  get synced(): boolean {
    return this.#informer.hasSynced;
  }

  async start(): Promise<void> {
    this.#informer.start();
    await this.#informer.waitForSync();
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
    for (const hook of this.#informer.store.list()) {
      const resolution = resolveHook(hook, this.#options.policy ?? DEFAULT_HOOK_POLICY);
      const refusal = resolution.ok ? await this.#contextRefusal(resolution.hook) : notReady(resolution.reason, resolution.message, hook.metadata?.generation);
      if (refusal) verdicts.set(hook, refusal);
      else if (resolution.ok) ready.set(resolution.hook.name, resolution.hook);
    }
    // Serve before registering: the API server may call a new path as soon as the configuration lands.
    const previous = this.hooks;
    this.hooks = new Map([...previous, ...ready]);
    const { name } = this.#options.configuration;
    try {
      await this.#applyIsolating(ready, verdicts);
    } catch (error) {
      const message = `the webhook configuration could not be written: ${error instanceof Error ? error.message : String(error)}`;
      for (const hook of this.#informer.store.list()) if (!verdicts.has(hook)) verdicts.set(hook, { type: 'Ready', status: 'False', reason: 'ConfigurationFailed', message });
      await this.#writeVerdicts(verdicts);
      throw error;
    }
    this.hooks = ready;
    for (const hook of this.#informer.store.list()) {
      const resolved = ready.get(hook.metadata?.name ?? '');
      if (!resolved || verdicts.has(hook)) continue;
      const kind = resolved.spec.type === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
      const generation = hook.metadata?.generation;
      verdicts.set(hook, { type: 'Ready', status: 'True', reason: 'Registered', message: `served at ${resolved.path}, registered in ${kind} ${name}`, ...(generation !== undefined ? { observedGeneration: generation } : {}) });
    }
    await this.#writeVerdicts(verdicts);
    logger.info({ hooks: [...ready.keys()] }, 'admission hooks registered');
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
        ready.delete(hook.name);
        const object = this.#informer.store.get(hook.name);
        const message = `the API server refuses this hook's webhook: ${error instanceof Error ? error.message : String(error)}`;
        if (object) verdicts.set(object, notReady('InvalidSpec', message, hook.generation));
      }
    }
    await this.#applyConfigurations(ready.values());
  }

  /** Applies both configurations; with `dryRunTypes`, only those, as a dry run (to test one hook alone). */
  async #applyConfigurations(hooks: Iterable<ResolvedHook>, dryRunTypes?: ReadonlyArray<'mutating' | 'validating'>): Promise<void> {
    const caBundlePem = this.#options.caBundle();
    const built = buildHookConfigurations(hooks, { ...this.#options.configuration, ...(caBundlePem ? { caBundlePem } : {}) });
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
      if (next) await writeHookConditions(this.#options.client, hook, next).catch((error: unknown) => this.#options.logger.warn({ err: error, hook: hook.metadata?.name }, 'could not write AdmissionHook status'));
    }
  }

  /**
   * Called after every function call: FunctionAvailable turns False on the first failure (with how it
   * failed) and True on the next success; only transitions and new failure reasons are written.
   */
  reportCall(hookName: string, failure: CallFailure | undefined): void {
    const before = this.#failing.get(hookName);
    const after = failure ? `${failure.kind}: ${failure.message}` : undefined;
    if (before === after || (before !== undefined && after !== undefined && before.split(':')[0] === after.split(':')[0])) return;
    if (after) this.#failing.set(hookName, after);
    else this.#failing.delete(hookName);
    const hook = this.#informer.store.get(hookName);
    if (!hook) return;
    const condition: ConditionInput = failure
      ? { type: 'FunctionAvailable', status: 'False', reason: failure.kind, message: `the last call failed: the function ${failure.message}` }
      : { type: 'FunctionAvailable', status: 'True', reason: 'Answering', message: 'the function answers' };
    const next = nextConditions(hook, [condition], (this.#options.now ?? (() => new Date()))());
    if (next) void writeHookConditions(this.#options.client, hook, next).catch((error: unknown) => this.#options.logger.warn({ err: error, hook: hookName }, 'could not write AdmissionHook status'));
  }

  /** Stops watching; with `unregister` (dev mode) deletes the configurations too. */
  async stop(options: { unregister?: boolean } = {}): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#review);
    await this.#running;
    await this.#informer.stop();
    if (!options.unregister) return;
    for (const path of Object.values(CONFIGURATION_PATHS)) {
      await this.#options.client.request({ method: 'DELETE', path: `${path}/${encodeURIComponent(this.#options.configuration.name)}` }).catch((error: unknown) => {
        if (!isApiError(error, 404)) throw error;
      });
    }
  }
}
