// A Loop's status as the router writes it: Ready (its health), Throttled and its versions' conditions
// (ShadowDiverged, CanaryRolledBack), each set through the one condition writer (lib/kube/conditions.ts) and
// all sent together, one write after another per Loop. The Loop controller decides; this writes.
import type { Logger } from 'pino';
import { isApiError, type KubeClient } from '../../lib/kube/kube-client.ts';
import { nextCondition, type ConditionInput } from '../../lib/kube/conditions.ts';
import { metaTime } from '../../lib/kube/meta-time.ts';
import { CANARY_ROLLED_BACK } from '../../lib/versions/error-budget.ts';
import { SHADOW_DIVERGED } from '../../lib/versions/shadow-divergence.ts';
import { CLUSTER_LOOP_PLURAL, LOOP_API_VERSION, LOOP_PLURAL, type Loop, type LoopCondition } from '../../api/loop.ts';
import type { LoopConfig } from '../base/loop-spec.ts';
import type { RouterMetrics } from '../base/router-metrics.ts';
import { rolledBackBy, type VersionCondition } from '../reconcile/function-versions.ts';
import type { LoopHealth } from '../intake/loop-runner.ts';
import { readyConditionChange, START_THROTTLED } from './loop-decision.ts';

export interface LoopStatusOptions {
  client: KubeClient;
  logger: Logger;
  metrics: RouterMetrics;
  /** Inline Loops are not API objects: their status lives in the router's log and metrics only. */
  inline: boolean;
  /** The Loop object by identity (the conditions a router restart left on it). */
  loopObject: (id: string) => Loop | undefined;
  /** The controller stopped: nothing more is written. */
  stopped: () => boolean;
}

export class LoopStatus {
  readonly #o: LoopStatusOptions;
  readonly #health = new Map<string, LoopHealth & { generation: number }>();
  /** The health each Loop's Ready condition was last written for (only transitions are written). */
  readonly #written = new Map<string, LoopHealth & { generation: number }>();
  /** Each Loop's conditions as last decided (Ready and its versions'): every status write sends them all. */
  readonly #conditions = new Map<string, Map<string, LoopCondition>>();
  /** Each Loop's status writes, chained: the condition written last is the one decided last. */
  readonly #statusWrites = new Map<string, Promise<void>>();

  constructor(options: LoopStatusOptions) {
    this.#o = options;
  }

  health(name: string): LoopHealth | undefined {
    return this.#health.get(name);
  }

  /** A Loop gone: its health and conditions are forgotten. */
  forget(name: string): void {
    this.#health.delete(name);
    this.#written.delete(name);
    this.#conditions.delete(name);
  }

  /**
   * Before a Loop (re)starts: its versions' conditions from before (remembered, or on the Loop after a router
   * restart) are kept for the versions it still has, dropped for the others, and a canary rolled back under
   * this very spec stays rolled back.
   */
  carryVersionConditions(name: string, config: LoopConfig): void {
    const known = this.#conditions.get(name) ?? new Map<string, LoopCondition>();
    for (const c of this.#o.loopObject(name)?.status?.conditions ?? []) if (c.type !== 'Ready' && !known.has(c.type)) known.set(c.type, c);
    if (!config.shadow) known.delete(SHADOW_DIVERGED);
    if (!config.canary || !rolledBackBy(known.get(CANARY_ROLLED_BACK), config.canary)) known.delete(CANARY_ROLLED_BACK);
    else config.canary.rolledBackAtStart = true;
    for (const type of [SHADOW_DIVERGED, CANARY_ROLLED_BACK]) {
      const c = known.get(type);
      this.#o.metrics.setLoopCondition(name, type, c ? c.status === 'True' : undefined);
    }
    this.#conditions.set(name, known);
  }

  /** A version's condition: written with the others when it changed. */
  setCondition(name: string, generation: number, change: VersionCondition): void {
    const known = this.#conditions.get(name) ?? new Map<string, LoopCondition>();
    this.#conditions.set(name, known);
    const previous = known.get(change.type);
    if (previous && previous.status === change.status && previous.reason === change.reason && previous.message === change.message) return;
    known.set(change.type, nextCondition(previous, { ...change, observedGeneration: generation }, metaTime(new Date())));
    this.#o.metrics.setLoopCondition(name, change.type, change.status === 'True');
    if (!this.#o.inline && !this.#o.stopped()) this.#writeStatus(name, generation, undefined);
  }

  /** The conditions of a Loop as they are now (tests, `kubeloop dev`). */
  conditions(name: string): LoopCondition[] {
    return [...(this.#conditions.get(name)?.values() ?? [])];
  }

  setHealth(name: string, generation: number, health: LoopHealth): void {
    const remembered = { ...health, generation };
    const condition = readyConditionChange(this.#written.get(name), health, generation);
    this.#health.set(name, remembered);
    this.#o.metrics.setLoopReady(name, health.ready);
    if (!condition || this.#o.inline || this.#o.stopped()) return;
    this.#written.set(name, remembered);
    const known = this.#conditions.get(name) ?? new Map<string, LoopCondition>();
    this.#conditions.set(name, known);
    known.set('Ready', nextCondition(known.get('Ready'), condition, metaTime(new Date())));
    this.#writeStatus(name, generation, remembered);
  }

  /** The Throttled condition (throttle-monitor.ts): written with the Loop's other conditions once Ready is known. */
  setThrottled(name: string, condition: ConditionInput): void {
    const known = this.#conditions.get(name) ?? new Map<string, LoopCondition>();
    this.#conditions.set(name, known);
    known.set('Throttled', nextCondition(known.get('Throttled'), condition, metaTime(new Date())));
    this.#o.metrics.setLoopCondition(name, 'Throttled', condition.status === 'True');
    const ready = known.get('Ready');
    if (!ready || this.#o.inline || this.#o.stopped()) return;
    this.#writeStatus(name, ready.observedGeneration ?? 0, undefined);
  }

  /**
   * The StartThrottled condition of a running Loop whose new spec waits for its namespace's start turn (undefined:
   * none waits). Written once per wait, not per edit (each edit would cost the router a write of its own); dropped
   * without a write of its own when the wait ends, since the new generation's Ready write follows.
   */
  setStartThrottled(name: string, wait: { message: string; runningGeneration: number } | undefined): void {
    const known = this.#conditions.get(name);
    const previous = known?.get(START_THROTTLED);
    if (!wait) {
      if (!previous) return;
      known!.delete(START_THROTTLED);
      this.#o.metrics.setLoopCondition(name, START_THROTTLED, undefined);
      return;
    }
    if (previous && previous.observedGeneration === wait.runningGeneration) return;
    const condition: ConditionInput = { type: START_THROTTLED, status: 'True', reason: 'NewGenerationWaits', message: wait.message.slice(0, 1024), observedGeneration: wait.runningGeneration };
    const conditions = known ?? new Map<string, LoopCondition>();
    this.#conditions.set(name, conditions);
    conditions.set(START_THROTTLED, nextCondition(previous, condition, metaTime(new Date())));
    this.#o.metrics.setLoopCondition(name, START_THROTTLED, true);
    const ready = conditions.get('Ready');
    if (!ready || this.#o.inline || this.#o.stopped()) return;
    this.#writeStatus(name, ready.observedGeneration ?? 0, undefined);
  }

  /** Writes every condition of the Loop (a merge patch replaces the list). `remembered`: the health this write is for. */
  #writeStatus(name: string, generation: number, remembered: (LoopHealth & { generation: number }) | undefined): void {
    const conditions = [...(this.#conditions.get(name)?.values() ?? [])];
    // Writes go one after another: two in flight at once could land in either order and leave an older
    // condition on the Loop, which only a transition would rewrite (a Loop stuck at Ready=True while every
    // call was refused). A write that fails is forgotten, so the next report of the same health writes again.
    const write = async (): Promise<void> => {
      try {
        await this.#o.client.request({
          method: 'PATCH',
          path: loopStatusPath(name),
          contentType: 'application/merge-patch+json',
          body: { status: { observedGeneration: generation, conditions } },
        });
      } catch (error) {
        if (remembered && this.#written.get(name) === remembered) this.#written.delete(name);
        if (!isApiError(error, 404)) this.#o.logger.warn({ loop: name, err: (error as Error).message }, 'could not write Loop status');
      }
    };
    const next = (this.#statusWrites.get(name) ?? Promise.resolve()).then(write);
    this.#statusWrites.set(name, next);
    void next.then(() => {
      if (this.#statusWrites.get(name) === next) this.#statusWrites.delete(name);
    });
  }
}

/** A loop by identity: a namespaced Loop's path, or a ClusterLoop's. */
export function loopObjectPath(id: string): string {
  const slash = id.indexOf('/');
  if (slash < 0) return `/apis/${LOOP_API_VERSION}/${CLUSTER_LOOP_PLURAL}/${encodeURIComponent(id)}`;
  return `/apis/${LOOP_API_VERSION}/namespaces/${encodeURIComponent(id.slice(0, slash))}/${LOOP_PLURAL}/${encodeURIComponent(id.slice(slash + 1))}`;
}

/** The status subresource of a loop by identity. */
function loopStatusPath(id: string): string {
  return `${loopObjectPath(id)}/status`;
}

