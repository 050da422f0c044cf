// When the Loop controller reviews running Loops' access again: soon after each RBAC change (lib/kube/rbac-watch.ts), and
// on a period as a safety net; hourly by default while RBAC is watched, every 5 minutes when the router may not
// watch it (or lost the read, until it is given back), since then the timer alone notices a revoked right. Tells the state as a metric.
import type { Logger } from 'pino';
import type { Gauge } from 'prom-client';
import type { KubeClient } from '../../lib/kube/kube-client.ts';
import type { InformerSource } from '../intake/informer-registry.ts';
import { watchRbac, type RbacChanges, type RbacWatch } from '../../lib/kube/rbac-watch.ts';
import { DEFAULT_ACCESS_REVIEW_MS, DEFAULT_UNWATCHED_ACCESS_REVIEW_MS } from './loop-access.ts';

export interface AccessReviewScheduleOptions {
  registry: InformerSource;
  client: KubeClient;
  logger: Logger;
  /** 1 while reviews follow RBAC changes, 0 while only the timer reviews. */
  rbacWatchGauge?: Pick<Gauge, 'set'>;
  /** --access-review-seconds when given: the period whether or not RBAC is watched. */
  periodMs?: number;
  /** Watch RBAC (the router); off: the timer alone (unit tests of the controller). */
  watch: boolean;
  /** Every Loop, in the fair low-priority order (LoopController.reviewAll). */
  sweep: () => void;
  /** The Loops the changes may concern (LoopController.reviewChanged). */
  changed: (changes: RbacChanges) => void;
}

export class AccessReviewSchedule {
  #timer: NodeJS.Timeout | undefined;
  /** The RBAC watch once started (undefined: not watched); stop() waits for its start, so no request of it outlives the client. */
  #watch: Promise<RbacWatch | undefined> | undefined;
  #stopped = false;
  #begun!: () => void;
  /**
   * Resolves once start() has asked for the RBAC watches (or found it may not): a Loop's review made after it sees
   * a right revoked later as a change. Loop starts do not wait for it, their reviews do (loop-controller.ts).
   */
  readonly started = new Promise<void>((resolve) => (this.#begun = resolve));

  constructor(private readonly o: AccessReviewScheduleOptions) {}

  async start(): Promise<void> {
    try {
      await this.#start();
    } finally {
      this.#begun();
    }
  }

  async #start(): Promise<void> {
    const { o } = this;
    if (o.watch && !this.#stopped) {
      const watch = await (this.#watch = this.#watchRbac());
      if (!watch) {
        this.#timerOnly();
        return;
      }
      // stop() came while it started: stop() stops it.
      if (this.#stopped) return;
      this.#watched();
      return;
    }
    this.#every(o.periodMs ?? DEFAULT_UNWATCHED_ACCESS_REVIEW_MS);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await (await this.#watch)?.stop();
  }

  /** The RBAC watch, or undefined when the router may not watch RBAC or cannot now (logged). */
  async #watchRbac(): Promise<RbacWatch | undefined> {
    const { o } = this;
    try {
      const watch = await watchRbac({
        acquire: (resource) => o.registry.acquire({ apiVersion: resource.apiVersion, kind: resource.kind }, true),
        // The Loops' reviews wait for these watches: their discovery goes out with the router's own review.
        ...(o.registry.resolve ? { prepare: (resource) => o.registry.resolve!({ apiVersion: resource.apiVersion, kind: resource.kind }) } : {}),
        process: 'router',
        reviewed: "a Loop's access",
        client: o.client,
        logger: o.logger,
        onChanges: (changes) => o.changed(changes),
        onLost: () => this.#timerOnly(),
        onRegained: () => this.#watched(),
      });
      return 'denied' in watch ? undefined : watch;
    } catch (error) {
      // Discovery or the API server failing now must not keep Loops from starting: the timer reviews meanwhile.
      o.logger.warn({ err: (error as Error).message }, 'cannot watch RBAC: a Loop\'s access is reviewed on the --access-review-seconds timer only');
      return undefined;
    }
  }

  /** RBAC changes are seen (at the start, or again after a refusal): the long period, unless the operator chose one. */
  #watched(): void {
    this.o.rbacWatchGauge?.set(1);
    this.#every(this.o.periodMs ?? DEFAULT_ACCESS_REVIEW_MS);
  }

  /** RBAC changes are not seen: the short period, unless the operator chose one. */
  #timerOnly(): void {
    this.o.rbacWatchGauge?.set(0);
    this.#every(this.o.periodMs ?? DEFAULT_UNWATCHED_ACCESS_REVIEW_MS);
  }

  #every(ms: number): void {
    clearInterval(this.#timer);
    if (this.#stopped) return;
    this.#timer = setInterval(() => this.o.sweep(), ms);
    this.#timer.unref();
  }
}
