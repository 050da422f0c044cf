// The Loop controller: starts, restarts and stops a LoopRunner per Loop as Loops are created, edited and
// deleted (from the API or given inline), runs each as its ServiceAccount once a SubjectAccessReview allows
// it (and again periodically), and keeps each Loop's Ready condition and observedGeneration.
import type { V1LabelSelector, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { matchesLabelSelector } from '../../lib/kube/label-selector.ts';
import { UnknownKindError } from '../../lib/kube/discovery.ts';
import { isApiError, serviceAccountUser, type KubeClient } from '../../lib/kube/kube-client.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { NamedObjectWatch } from '../../lib/kube/named-object-watch.ts';
import type { InformerLease, InformerRegistry } from '../intake/informer-registry.ts';
import type { RateLimit } from '../../lib/kube/rate-limiter.ts';
import { LOOP_API_VERSION, LOOP_KIND, type Loop, type LoopCondition } from '../../api/loop.ts';
import { accessChecks, reviewAccess, type AccessVerdict } from '../../lib/kube/access-review.ts';
import { DEFAULT_FUNCTION_URL_POLICY, type FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import { LoopSpecError, loopSpecErrorReason, parseLoop, type LoopConfig } from '../base/loop-spec.ts';
import { LoopRunner, type LoopHealth, type LoopRunnerDeps } from '../intake/loop-runner.ts';
import { readSigningKeys, SigningSecretError, watchSigningKeys } from './signing-key.ts';
import { WorkQueue } from '../base/work-queue.ts';

export interface LoopControllerOptions {
  runnerDeps: Omit<LoopRunnerDeps, 'onHealth'>;
  registry: InformerRegistry;
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
  /** How often a running Loop's access is reviewed again (RBAC changes); 5 minutes by default. */
  accessReviewIntervalMs?: number;
}

interface Running {
  runner: LoopRunner;
  generation: number;
  specJson: string;
  /** The watch of the Loop's signing Secret: a rotated key is used from the next call. */
  signingWatch?: NamedObjectWatch<V1Secret>;
  /** Set when that Secret broke (deleted, invalid): the next sync stops the Loop until it is fixed. */
  signingProblem?: string;
}

async function stopRunning(running: Running): Promise<void> {
  await running.signingWatch?.stop();
  await running.runner.stop();
}

export class LoopController {
  readonly #o: LoopControllerOptions;
  readonly #running = new Map<string, Running>();
  readonly #health = new Map<string, LoopHealth & { generation: number }>();
  readonly #sync: WorkQueue<null>;
  #loops: InformerLease | undefined;
  #inline = new Map<string, Loop>();
  #stopped = false;
  #reviewTimer: NodeJS.Timeout | undefined;

  constructor(options: LoopControllerOptions) {
    this.#o = options;
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

  runner(name: string): LoopRunner | undefined {
    return this.#running.get(name)?.runner;
  }
  runners(): LoopRunner[] {
    return [...this.#running.values()].map((r) => r.runner);
  }
  health(name: string): LoopHealth | undefined {
    return this.#health.get(name);
  }

  async start(): Promise<void> {
    // RBAC changes without the Loop changing: every Loop's access is reviewed again on this period.
    this.#reviewTimer = setInterval(() => {
      for (const name of this.#loopNames()) this.#sync.add(name, null);
    }, this.#o.accessReviewIntervalMs ?? 5 * 60_000);
    this.#reviewTimer.unref();
    if (this.#o.inline) {
      for (const loop of this.#o.inline) {
        this.#inline.set(loop.metadata.name ?? '', loop);
        this.#sync.add(loop.metadata.name ?? '', null);
      }
      return;
    }
    this.#loops = await this.#o.registry.acquire({ apiVersion: LOOP_API_VERSION, kind: LOOP_KIND }, false);
    const informer = this.#loops.informer;
    const enqueue = (o: KubeObject) => this.#sync.add(o.metadata?.name ?? '', null);
    informer.on('add', enqueue);
    informer.on('update', (o, previous) => {
      const relabelled = JSON.stringify(o.metadata?.labels ?? {}) !== JSON.stringify(previous.metadata?.labels ?? {});
      if (o.metadata?.generation !== previous.metadata?.generation || relabelled) enqueue(o);
    });
    informer.on('delete', enqueue);
    await informer.waitForSync();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#reviewTimer);
    await this.#sync.shutdown();
    await Promise.all([...this.#running.values()].map(stopRunning));
    this.#running.clear();
    await this.#loops?.release();
  }

  /** Waits until the named Loop runs with complete caches (tests and `kubeloop dev`). */
  async waitForLoop(name: string, timeoutMs = 60_000): Promise<LoopRunner> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const runner = this.runner(name);
      if (runner) {
        await runner.synced;
        return runner;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`Loop ${name} did not start within ${timeoutMs} ms (${this.health(name)?.message ?? 'no status'})`);
  }

  #loopNames(): string[] {
    if (this.#o.inline) return [...this.#inline.keys()];
    return (this.#loops?.informer.store.list() ?? []).map((o) => o.metadata?.name ?? '').filter((n) => n !== '');
  }

  #loopObject(name: string): Loop | undefined {
    if (this.#o.inline) return this.#inline.get(name);
    const loop = this.#loops?.informer.store.get(name) as unknown as Loop | undefined;
    // A Loop that stops matching the selector is treated as deleted by this router.
    return loop && matchesLabelSelector(this.#o.loopSelector, loop.metadata.labels) ? loop : undefined;
  }

  async #reconcileLoop(name: string): Promise<void> {
    if (this.#stopped) return;
    const loop = this.#loopObject(name);
    const current = this.#running.get(name);
    if (!loop) {
      if (current) {
        this.#running.delete(name);
        await stopRunning(current);
        this.#o.logger.info({ loop: name }, 'Loop deleted; stopped');
      }
      this.#health.delete(name);
      this.#o.runnerDeps.metrics.forgetLoop(name);
      return;
    }
    const generation = loop.metadata.generation ?? 0;
    const specJson = JSON.stringify(loop.spec);
    if (current && current.specJson === specJson && current.signingProblem === undefined) {
      // The periodic review: a Loop whose ServiceAccount lost its rights stops receiving.
      const verdict = await this.#review(current.runner.loop);
      if (verdict.allowed) return;
      this.#running.delete(name);
      await stopRunning(current);
      this.#forbid(loop, generation, verdict.message);
      return;
    }
    // A changed spec, or a signing Secret that broke: start again, which waits for a valid key.
    if (current) {
      this.#running.delete(name);
      await stopRunning(current);
    }
    let config: LoopConfig;
    try {
      config = parseLoop(loop, this.#o.urlPolicy ?? DEFAULT_FUNCTION_URL_POLICY);
    } catch (error) {
      if (!(error instanceof LoopSpecError)) throw error;
      this.#o.logger.warn({ loop: name, err: error.message }, 'Loop has an invalid spec');
      this.#setHealth(name, generation, { ready: false, reason: loopSpecErrorReason(error), message: error.message });
      this.#event(loop, loopSpecErrorReason(error), error.message);
      return;
    }
    const loopClient = this.#o.client.impersonating(
      { user: serviceAccountUser(config.serviceAccount.namespace, config.serviceAccount.name) },
      this.#o.loopRateLimit ?? { qps: 50, burst: 100 },
    );
    // Read as the Loop's ServiceAccount: a Loop can only use a key it may read itself.
    if (config.signingSecretRef) {
      try {
        config.signingKey = await readSigningKeys(loopClient, config.signingSecretRef);
      } catch (error) {
        if (!(error instanceof SigningSecretError)) throw error;
        // Nothing is sent unsigned: the Loop waits (with backoff) for its Secret.
        this.#setHealth(name, generation, { ready: false, reason: 'InvalidSigningSecret', message: error.message });
        this.#sync.addRateLimited(name, null);
        return;
      }
    }
    const runner = new LoopRunner(config, { ...this.#o.runnerDeps, client: loopClient, onHealth: (loopName, health) => this.#setHealth(loopName, generation, health) });
    try {
      const verdict = await this.#review(config);
      if (!verdict.allowed) {
        this.#forbid(loop, generation, verdict.message);
        return;
      }
      await runner.start();
    } catch (error) {
      if (error instanceof UnknownKindError) {
        this.#setHealth(name, generation, { ready: false, reason: 'InvalidSpec', message: error.message });
        // The CRD may be installed later: look again with backoff.
        this.#sync.addRateLimited(name, null);
        return;
      }
      if (isApiError(error, 403)) {
        this.#setHealth(name, generation, { ready: false, reason: 'Forbidden', message: error.message });
        this.#sync.addRateLimited(name, null);
        return;
      }
      throw error;
    }
    this.#sync.forget(name);
    const running: Running = { runner, generation, specJson };
    if (config.signingSecretRef && config.signingKey) running.signingWatch = this.#watchSigningKeys(running, config, loopClient);
    this.#running.set(name, running);
    this.#o.logger.info({ loop: name, for: config.for, owns: config.owns, url: config.functionUrl, ref: config.functionRef, serviceAccount: config.serviceAccount }, 'Loop started');
  }

  /** Rotation without a restart: the runner reads config.signingKey on every call. */
  #watchSigningKeys(running: Running, config: LoopConfig, loopClient: KubeClient): NamedObjectWatch<V1Secret> {
    const fields = { loop: config.name, secret: `${config.signingSecretRef!.namespace}/${config.signingSecretRef!.name}` };
    return watchSigningKeys(loopClient, config.signingSecretRef!, config.signingKey!, {
      rotated: (keys) => {
        config.signingKey = keys;
        this.#o.logger.info({ ...fields, keys: keys.length }, 'signing key changed; the next calls are signed with it');
      },
      broken: (error) => {
        if (this.#running.get(config.name) !== running) return;
        running.signingProblem = error.message;
        this.#o.logger.warn({ ...fields, err: error.message }, 'signing Secret broke; the Loop stops until it is fixed');
        this.#sync.add(config.name, null);
      },
      unwatchable: (error) => {
        this.#o.logger.warn({ ...fields, err: error.message }, 'cannot watch the signing Secret (grant the ServiceAccount list and watch on it): a rotated key is only seen when the Loop restarts');
      },
    });
  }

  /** May the Loop's ServiceAccount list and watch everything the Loop would receive? */
  async #review(config: LoopConfig): Promise<AccessVerdict> {
    const { discovery } = this.#o.runnerDeps;
    const resources = await Promise.all([config.for, ...config.owns].map((k) => discovery.resolve(k.apiVersion, k.kind)));
    return reviewAccess(this.#o.client, config.serviceAccount, accessChecks(resources, config.namespaces));
  }

  /** Ready=False Forbidden and a Warning event; reviewed again with backoff, on change and periodically. */
  #forbid(loop: Loop, generation: number, message: string): void {
    const name = loop.metadata.name ?? '';
    this.#o.logger.warn({ loop: name, err: message }, 'Loop forbidden; nothing is sent to its function');
    this.#setHealth(name, generation, { ready: false, reason: 'Forbidden', message });
    this.#event(loop, 'Forbidden', message);
    // Review again soon (backing off to a minute): RBAC is often created just after the Loop.
    this.#sync.addRateLimited(name, null);
  }

  #event(loop: Loop, reason: string, message: string): void {
    // Inline Loops are not API objects: their status lives in the router's log and metrics only.
    if (this.#o.inline) return;
    this.#o.runnerDeps.events.record({ apiVersion: LOOP_API_VERSION, kind: LOOP_KIND, metadata: loop.metadata }, { type: 'Warning', reason, message });
  }

  #setHealth(name: string, generation: number, health: LoopHealth): void {
    const previous = this.#health.get(name);
    this.#health.set(name, { ...health, generation });
    this.#o.runnerDeps.metrics.setLoopReady(name, health.ready);
    // Write only transitions: a message that merely changes (latencies) is not worth an API write.
    if (previous && previous.ready === health.ready && previous.reason === health.reason && previous.generation === generation) return;
    if (this.#o.inline || this.#stopped) return;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const condition: LoopCondition = {
      type: 'Ready',
      status: health.ready ? 'True' : 'False',
      reason: health.reason,
      message: health.message.slice(0, 1024),
      lastTransitionTime: now,
      observedGeneration: generation,
    };
    void this.#o.client
      .request({
        method: 'PATCH',
        path: `/apis/kubeloop.dev/v1alpha1/loops/${encodeURIComponent(name)}/status`,
        contentType: 'application/merge-patch+json',
        body: { status: { observedGeneration: generation, conditions: [condition] } },
      })
      .catch((error: unknown) => {
        if (!isApiError(error, 404)) this.#o.logger.warn({ loop: name, err: (error as Error).message }, 'could not write Loop status');
      });
  }
}
