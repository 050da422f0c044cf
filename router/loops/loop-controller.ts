// The Loop controller: starts, restarts and stops a LoopRunner per Loop and ClusterLoop as they are created,
// edited and deleted (from the API or given inline), runs each as its ServiceAccount once a SubjectAccessReview
// allows it (again after RBAC changes and periodically: access-review-schedule.ts), and keeps each one's Ready
// condition and observedGeneration (written by loop-status.ts). Everything is keyed by the loop's identity
// (`<namespace>/<name>` or `<name>`, loopIdentity).
// What to do is decided purely (loop-decision.ts); #sync carries it out, and #carryOut is the one place that
// moves the Loop's sync queue, its health and its events. The loops come from loop-sources.ts; a namespace's
// (re)starts are paced by tenant-start-limit.ts (a running Loop hands over to its new spec in its turn).
import type { V1LabelSelector } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { UnknownKindError } from '../../lib/kube/discovery.ts';
import { kindKey } from '../../lib/kube/resource-paths.ts';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import type { InformerSource } from '../intake/informer-registry.ts';
import type { RateLimit } from '../../lib/kube/rate-limiter.ts';
import { LOOP_API_VERSION, LOOP_KIND, type Loop, type LoopCondition } from '../../api/loop.ts';
import { LoopSpecError, type LoopConfig } from '../base/loop-spec.ts';
import { settleLoopFinalizer } from './primary-release.ts';
import { DEFAULT_FUNCTION_URL_POLICY, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import type { LoopHealth, LoopRunner, LoopRunnerDeps } from '../intake/loop-runner.ts';
import { SigningSecretError } from './signing-key.ts';
import { WorkQueue } from '../base/work-queue.ts';
import { decideLoop, generationOf, loopKinds, planLoop, type LoopDecision, type LoopOutcome, type LoopPlan, type RunningState } from './loop-decision.ts';
import type { TenantBudget } from '../base/tenant-budget.ts';
import { clusterScopedKindError, kubeLoopLauncher, type LaunchedLoop, type LoopLauncher } from './loop-launcher.ts';
import { DEFAULT_MAX_LOOPS_PER_TENANT, TenantLoopLimit } from './tenant-loop-limit.ts';
import { tenantOfNamespace } from '../../api/tenant.ts';
import type { EventOrigin } from '../apply/event-recorder.ts';
import type { ConditionInput } from '../../lib/kube/conditions.ts';
import { LoopStatus, loopObjectPath } from './loop-status.ts';
import { LoopSources } from './loop-sources.ts';
import { affectedLoops, loopRbacNamespaces, reviewOrder } from './loop-access.ts';
import type { RbacChanges } from '../../lib/kube/rbac-watch.ts';
import { AccessReviewSchedule } from './access-review-schedule.ts';
import { startReviewed } from './reviewed-start.ts';
import { throttleSource, type ThrottleSource } from './throttle-monitor.ts';
import type { AccessVerdict } from '../../lib/kube/access-review.ts';
import { DEFAULT_TENANT_LOOP_STARTS, startThrottledMessage, TenantStartLimit } from './tenant-start-limit.ts';

export interface LoopControllerOptions {
  runnerDeps: Omit<LoopRunnerDeps, 'onHealth'>;
  registry: InformerSource;
  client: KubeClient;
  logger: Logger;
  /** Inline Loops (`--loops FILE`, tests, benchmarks); when omitted, Loop objects are watched. */
  inline?: Loop[];
  /** Only Loop objects whose labels match (sharding Loops between router deployments, tests). */
  loopSelector?: V1LabelSelector;
  /** Where functions may live (the admission policy's rules); strict when omitted. */
  urlPolicy?: FunctionUrlPolicy;
  /** Each Loop's own API budget, for the writes and reads made as its ServiceAccount. */
  loopRateLimit?: RateLimit;
  /** The API budget all Loops share by tenant weight (kubeLoopLauncher). */
  budget?: TenantBudget;
  /** How often running Loops' access is reviewed again whatever RBAC does (access-review-schedule.ts). */
  accessReviewIntervalMs?: number;
  /** Review the Loops an RBAC change may concern within seconds of it (the router); off: the timer alone. */
  watchRbac?: boolean;
  /** How Loops reach the cluster (reviews, runners as their ServiceAccount); kubeLoopLauncher when omitted. */
  launcher?: LoopLauncher;
  /** Namespaced Loops run per namespace, the oldest first (--max-loops-per-tenant); 0: no limit. */
  maxLoopsPerTenant?: number;
  /** Loop (re)starts per namespace (--tenant-loop-starts-qps/-burst); qps 0: no limit. */
  tenantLoopStarts?: RateLimit;
}

/** A Loop the controller runs: what the plan compares with, and the launched runner. */
interface Running extends RunningState {
  launched: LaunchedLoop;
  /** The Loop's generation the runner runs. */
  generation: number;
  /** What the Throttled sampler reads of it: one object for the runner's life, not one per pass. */
  throttle: ThrottleSource;
}

export class LoopController {
  readonly #o: LoopControllerOptions;
  readonly #launcher: LoopLauncher;
  readonly #limit: TenantLoopLimit;
  readonly #starts: TenantStartLimit;
  readonly #running = new Map<string, Running>();
  readonly #status: LoopStatus;
  readonly #sync: WorkQueue<null>;
  readonly #sources: LoopSources;
  #stopped = false;
  readonly #reviews: AccessReviewSchedule;
  /** Loops stopped or kept from starting for lack of rights, with loopRbacNamespaces: an RBAC change may let them start. */
  readonly #denied = new Map<string, ReadonlySet<string>>();
  #unscope: (() => void) | undefined;

  constructor(options: LoopControllerOptions) {
    this.#o = options;
    this.#sources = new LoopSources(options);
    this.#launcher = options.launcher ?? kubeLoopLauncher(options);
    this.#status = new LoopStatus({
      client: options.client,
      logger: options.logger,
      metrics: options.runnerDeps.metrics,
      inline: options.inline !== undefined,
      loopObject: (id) => this.#sources.loop(id),
      stopped: () => this.#stopped,
    });
    this.#limit = new TenantLoopLimit(options.maxLoopsPerTenant ?? DEFAULT_MAX_LOOPS_PER_TENANT, () => this.#sources.selectedNamespaced());
    this.#starts = new TenantStartLimit(options.tenantLoopStarts ?? DEFAULT_TENANT_LOOP_STARTS);
    this.#reviews = new AccessReviewSchedule({
      registry: options.registry, client: options.client, logger: options.logger,
      rbacWatchGauge: options.runnerDeps.metrics.rbacWatch,
      ...(options.accessReviewIntervalMs ? { periodMs: options.accessReviewIntervalMs } : {}),
      watch: options.watchRbac ?? false,
      sweep: () => this.reviewAll(),
      changed: (changes) => this.reviewChanged(changes),
    });
    this.#sync = new WorkQueue<null>({
      concurrency: 4,
      process: (item) => this.#reconcileLoop(item.key),
      backoff: { baseMs: 500, maxMs: 60_000, jitter: 0.2 },
      onError: (name, error) => {
        // An API error (a SubjectAccessReview that failed, say) is retried with backoff, never dropped.
        options.logger.error({ loop: name, err: (error as Error).message }, 'Loop sync failed');
        if (!this.#stopped) this.#sync.addRateLimited(name, null);
      },
    });
  }

  /** The runner of a loop by identity: `<namespace>/<name>` for a Loop, `<name>` for a ClusterLoop. */
  runner(name: string): LoopRunner | undefined {
    return this.#running.get(name)?.launched.runner;
  }
  runners(): LoopRunner[] {
    return [...this.#running.values()].map((r) => r.launched.runner);
  }
  /** Each running Loop's waiting counters, for the Throttled condition (throttle-monitor.ts). */
  *throttleSources(): Generator<ThrottleSource> {
    for (const running of this.#running.values()) yield running.throttle;
  }

  health(name: string): LoopHealth | undefined {
    return this.#status.health(name);
  }

  /** The conditions of a Loop as they are now (tests, `kubeloop dev`). */
  conditions(name: string): LoopCondition[] {
    return this.#status.conditions(name);
  }

  /** The Throttled condition (throttle-monitor.ts): written with the Loop's other conditions once Ready is known. */
  setThrottled(name: string, condition: ConditionInput): void {
    this.#status.setThrottled(name, condition);
  }

  async start(): Promise<void> {
    // A kind that moved between one cluster-wide watch and watches per namespace (--cluster-wide-watch): the
    // namespaced Loops on it restart, so they acquire it anew (cluster-wide-watch.ts).
    this.#unscope = this.#o.registry.onScopeChange?.((resource) => this.#rewatch(kindKey(resource.apiVersion, resource.kind)));
    // RBAC changes without the Loop changing: the Loops a change concerns are reviewed again soon, every Loop on a
    // period. The Loops start meanwhile; each one's review waits for the RBAC watch to be asked for (#review).
    await Promise.all([this.#reviews.start(), this.#sources.start((id) => this.#sync.add(id, null), (namespace) => this.#limit.affected(namespace))]);
  }

  /**
   * Reviews every Loop's access again (the period's sweep; tests call it). Low priority, so a Loop created or
   * edited meanwhile is not queued behind the sweep, and one namespace at a time in turn (reviewOrder), so one
   * tenant's many Loops do not hold back the others' reviews.
   */
  reviewAll(): void {
    for (const name of reviewOrder(this.#sources.names())) this.#sync.add(name, null, 'low');
  }

  /** Reviews again, as the sweep does, the running Loops an RBAC change may concern (a right lost) and the denied ones (gained). */
  reviewChanged(changes: RbacChanges): void {
    const scopes = new Map(this.#denied);
    for (const [name, running] of this.#running) scopes.set(name, loopRbacNamespaces(running.launched.runner.loop));
    for (const name of affectedLoops(changes, scopes)) this.#sync.add(name, null, 'low');
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#reviews.stop();
    this.#unscope?.();
    await this.#sync.shutdown();
    await Promise.all([...this.#running.values()].map((r) => r.launched.stop()));
    this.#running.clear();
    await this.#sources.release();
  }

  /** Waits until the Loop (by identity) runs with complete caches (tests and `kubeloop dev`). */
  async waitForLoop(name: string, timeoutMs = 60_000): Promise<LoopRunner> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const runner = this.runner(name);
      if (runner) return runner.synced.then(() => runner);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`Loop ${name} did not start within ${timeoutMs} ms (${this.health(name)?.message ?? 'no status'})`);
  }

  async #reconcileLoop(name: string): Promise<void> {
    if (this.#stopped) return;
    const loop = this.#sources.loop(name);
    const current = this.#running.get(name);
    const plan = planLoop(loop, current, this.#o.urlPolicy ?? DEFAULT_FUNCTION_URL_POLICY, this.#limit.overLimit(name, loop));
    const outcome = await this.#act(name, plan, current);
    const config = plan.kind === 'start' ? plan.config : current?.launched.runner.loop;
    if (config && (outcome.kind === 'access-denied' || outcome.kind === 'watch-forbidden')) this.#denied.set(name, loopRbacNamespaces(config));
    else this.#denied.delete(name);
    const finalizerDone = await this.#loopFinalizer(name, loop, config);
    this.#carryOut(name, loop, generationOf(plan, loop), decideLoop(outcome));
    if (!finalizerDone) this.#sync.addRateLimited(name, null);
  }

  /** The router's finalizer on the Loop (primary-release.ts); false: try again later. */
  #loopFinalizer(name: string, loop: Loop | undefined, known: LoopConfig | undefined): Promise<boolean> {
    if (!loop || this.#o.inline) return Promise.resolve(true);
    return settleLoopFinalizer(
      {
        client: this.#o.client,
        logger: this.#o.logger,
        urlPolicy: this.#o.urlPolicy ?? DEFAULT_FUNCTION_URL_POLICY,
        release: (config) => this.#launcher.release(config),
        warn: (warning) => this.#warn(loop, warning),
      },
      { id: name, path: loopObjectPath(name), loop, known },
    );
  }

  /** Does what the plan says (stops, reviews, starts) and tells what came of it. */
  async #act(name: string, plan: LoopPlan, current: Running | undefined): Promise<LoopOutcome> {
    if (plan.kind === 'review') {
      // The periodic review: a Loop whose ServiceAccount lost its rights stops receiving.
      const verdict = await this.#review(current!.launched.runner.loop);
      if (verdict.allowed) return { kind: 'still-allowed' };
      await this.#stopRunning(name, current!);
      return { kind: 'access-denied', message: verdict.message };
    }
    // A changed spec hands over (below); deleted, refused, or a signing Secret that broke: stop at once.
    const handover = plan.kind === 'start' && current !== undefined && current.signingProblem === undefined && !current.rewatch ? current : undefined;
    if (current && !handover) await this.#stopRunning(name, current);
    if (plan.kind !== 'start') this.#starts.forget(name);
    if (plan.kind === 'remove') return { kind: 'removed', wasRunning: current !== undefined };
    if (plan.kind === 'over-limit') return { kind: 'over-tenant-limit', message: plan.message };
    if (plan.kind === 'invalid') return { kind: 'invalid-spec', error: plan.error };
    // Only a namespaced Loop object's (re)starts are its tenant's to spend: a ClusterLoop is the cluster admin's,
    // inline Loops (--loops) the operator's, read once.
    // A restart the router asked for (its watch of a kind moved) is not the tenant's to pay for either.
    const namespace = this.#o.inline || current?.rewatch ? undefined : plan.config.namespace;
    const waitMs = namespace === undefined ? 0 : this.#starts.reserve(namespace, name);
    if (namespace !== undefined && waitMs > 0) {
      this.#o.runnerDeps.metrics.loopStartsThrottled.inc();
      // The running generation keeps working until the new one may start, as a rolling update keeps the old ReplicaSet.
      const running = handover && { runningGeneration: handover.generation };
      return { kind: 'start-throttled', waitMs, message: startThrottledMessage(namespace, this.#starts.limit, waitMs, running || undefined), ...(running ? { handover: running } : {}) };
    }
    if (handover) await this.#stopRunning(name, handover);
    return this.#start(name, plan);
  }

  async #start(name: string, plan: Extract<LoopPlan, { kind: 'start' }>): Promise<LoopOutcome> {
    const { config, specJson, generation } = plan;
    let confinement: LoopSpecError | undefined;
    try {
      confinement = await clusterScopedKindError(config, this.#o.runnerDeps.discovery);
    } catch (error) {
      if (error instanceof UnknownKindError) return { kind: 'kind-unknown', message: error.message };
      throw error;
    }
    if (confinement) return { kind: 'invalid-spec', error: confinement };
    this.#status.carryVersionConditions(name, config);
    this.#status.setStartThrottled(name, undefined);
    // Asked while the signing key is read and the watches list; the first call waits for it (reviewed-start.ts).
    const overlap = !this.#denied.has(name);
    const review = overlap ? this.#review(config) : undefined;
    review?.catch(() => {});
    let launched: LaunchedLoop;
    try {
      launched = await this.#launcher.launch(config, {
        onHealth: (health) => this.#status.setHealth(name, generation, health),
        onCondition: (condition, warning) => {
          if (this.#running.get(name)?.launched !== launched) return;
          this.#status.setCondition(name, generation, condition);
          const loop = this.#sources.loop(name);
          if (warning && loop && !this.#o.inline) this.#warn(loop, warning);
        },
        signingBroken: (message) => {
          const running = this.#running.get(name);
          if (running?.launched !== launched) return;
          running.signingProblem = message;
          this.#sync.add(name, null);
        },
      });
    } catch (error) {
      if (error instanceof SigningSecretError) return { kind: 'signing-secret-invalid', message: error.message };
      throw error;
    }
    try {
      const verdict = await startReviewed({ review: () => review ?? this.#review(config), start: (allowed) => launched.runner.start(allowed), stop: () => launched.stop(), overlap });
      if (!verdict.allowed) return { kind: 'access-denied', message: verdict.message };
    } catch (error) {
      if (error instanceof UnknownKindError) return { kind: 'kind-unknown', message: error.message };
      if (isApiError(error, 403)) return { kind: 'watch-forbidden', message: error.message };
      throw error;
    }
    this.#running.set(name, { launched, specJson, generation, throttle: throttleSource(name, launched, this.#status.conditions(name)) });
    launched.followSigningKey();
    return { kind: 'started', config };
  }

  /** After the RBAC watch is asked for, so a right revoked once the review is made is seen as a change. */
  async #review(config: LoopConfig): Promise<AccessVerdict> {
    await this.#reviews.started;
    return this.#launcher.review(config);
  }

  /** Restarts every running namespaced Loop that names the kind (`kindKey`), without spending its tenant's starts. */
  #rewatch(kind: string): void {
    for (const [name, running] of this.#running) {
      const config = running.launched.runner.loop;
      if (config.namespace === undefined || !loopKinds(config).includes(kind)) continue;
      running.rewatch = true;
      this.#sync.add(name, null);
    }
  }

  async #stopRunning(name: string, running: Running): Promise<void> {
    this.#running.delete(name);
    await running.launched.stop();
  }

  /** Carries a decision out: the sync queue, the Loop's health and condition, its Warning event, the log. */
  #carryOut(name: string, loop: Loop | undefined, generation: number, decision: LoopDecision): void {
    if (decision.step === 'forget') this.#sync.forget(name);
    if (decision.step === 'backoff') this.#sync.addRateLimited(name, null);
    if (decision.step === 'after') this.#sync.addAfter(name, null, decision.delayMs ?? 0);
    if (decision.forgetHealth) {
      this.#status.forget(name);
      this.#o.runnerDeps.metrics.forgetLoop(name);
    }
    // Whatever else came of the Loop (started, stopped, refused), no handover waits any more.
    this.#status.setStartThrottled(name, decision.handover);
    if (decision.health) this.#status.setHealth(name, generation, decision.health);
    // Inline Loops are not API objects: their status lives in the router's log and metrics only.
    if (decision.warning && loop && !this.#o.inline) this.#warn(loop, decision.warning);
    if (decision.log) this.#o.logger[decision.log.level]({ loop: name, ...decision.log.fields }, decision.log.message);
  }

  /** A Warning event on the Loop: the router's own word, charged to the Loop's tenant in the router's event budget. */
  #warn(loop: Loop, warning: { reason: string; message: string }): void {
    const origin: EventOrigin = { tenant: tenantOfNamespace(loop.kind === LOOP_KIND ? loop.metadata.namespace : undefined), source: 'router' };
    this.#o.runnerDeps.events.record({ apiVersion: LOOP_API_VERSION, kind: loop.kind, metadata: loop.metadata }, { type: 'Warning', ...warning }, origin);
  }
}
