// The Loop controller's decisions, pure like reconcile-decision.ts: what to do with a Loop as observed
// against what runs for it (planLoop), and what the result of doing it means for the Loop's sync queue,
// its Ready condition, its Warning events and the log (decideLoop). loop-controller.ts carries them out.
import type { Loop } from '../../api/loop.ts';
import type { FunctionUrlPolicy } from '../../lib/config/function-url-policy.ts';
import { LoopSpecError, loopSpecErrorReason, parseLoop, type LoopConfig } from '../base/loop-spec.ts';
import type { LoopHealth } from '../intake/loop-runner.ts';
import type { ConditionInput } from '../../lib/kube/conditions.ts';
import { kindKey } from '../../lib/kube/resource-paths.ts';

/** The Ready reason of a Loop that waits for its start, and the condition of a running Loop whose new spec waits. */
export const START_THROTTLED = 'StartThrottled';

/** What the controller knows of the runner it has for a Loop. */
export interface RunningState {
  specJson: string;
  /** Set when the Loop's signing Secret broke (deleted, invalid) while it ran. */
  signingProblem?: string;
  /** Set when the router's watch of one of its kinds moved (--cluster-wide-watch lost or regained): start it again. */
  rewatch?: boolean;
}

/** What to do with one Loop now. Every plan but `review` first stops what runs for the Loop. */
export type LoopPlan =
  /** Deleted (or being deleted), or no longer selected by this router: stop it and forget its health. */
  | { kind: 'remove' }
  /** Running with this very spec: review its ServiceAccount's access again (RBAC changes on its own). */
  | { kind: 'review' }
  /** New, changed, its signing Secret broke, or its watches must move: start it (again) with this config. */
  | { kind: 'start'; config: LoopConfig; specJson: string; generation: number }
  /** A spec the router cannot run: report it, start nothing. */
  | { kind: 'invalid'; error: LoopSpecError; generation: number }
  /** Past its tenant's Loop limit (tenant-loop-limit.ts): stop it if it runs, report why, start nothing. */
  | { kind: 'over-limit'; message: string; generation: number };

/** `overLimit`: why the Loop may not run now, when its tenant runs as many Loops as it may. */
export function planLoop(loop: Loop | undefined, running: RunningState | undefined, urlPolicy: FunctionUrlPolicy, overLimit?: string): LoopPlan {
  // A Loop being deleted stops at once; its finalizer, if any, is the controller's next step (primary-release.ts).
  if (!loop || loop.metadata.deletionTimestamp !== undefined) return { kind: 'remove' };
  const generation = loop.metadata.generation ?? 0;
  if (overLimit !== undefined) return { kind: 'over-limit', message: overLimit, generation };
  const specJson = JSON.stringify(loop.spec);
  if (running && running.specJson === specJson && running.signingProblem === undefined && !running.rewatch) return { kind: 'review' };
  try {
    return { kind: 'start', config: parseLoop(loop, urlPolicy), specJson, generation };
  } catch (error) {
    if (!(error instanceof LoopSpecError)) throw error;
    return { kind: 'invalid', error, generation };
  }
}

/** What carrying a plan out came to. */
export type LoopOutcome =
  | { kind: 'removed'; wasRunning: boolean }
  /** The periodic review found the running Loop still allowed. */
  | { kind: 'still-allowed' }
  | { kind: 'started'; config: LoopConfig }
  | { kind: 'invalid-spec'; error: LoopSpecError }
  /** The signing Secret cannot be read or holds no valid key: nothing is sent unsigned. */
  | { kind: 'signing-secret-invalid'; message: string }
  /** The SubjectAccessReview denied the Loop's ServiceAccount what the Loop receives. */
  | { kind: 'access-denied'; message: string }
  /** The API server does not serve a kind of the Loop (its CRD may come later). */
  | { kind: 'kind-unknown'; message: string }
  /** A watch was refused (403): the router's own RBAC does not allow it. */
  | { kind: 'watch-forbidden'; message: string }
  /** Its tenant runs as many Loops as it may: it waits for older ones to be deleted. */
  | { kind: 'over-tenant-limit'; message: string }
  /**
   * Its tenant (re)started Loops faster than it may (tenant-start-limit.ts): it starts after `waitMs`.
   * `handover`: the Loop's spec changed while it ran, and its running generation keeps running until then.
   */
  | { kind: 'start-throttled'; message: string; waitMs: number; handover?: { runningGeneration: number } };

export interface LoopDecision {
  /** The Loop's sync queue: done, look again with backoff or after `delayMs`, or leave it (a change brings it back). */
  step: 'forget' | 'backoff' | 'after' | 'none';
  delayMs?: number;
  /** The Loop's new health (its Ready condition); undefined leaves it as it is. */
  health?: LoopHealth;
  /** The Loop is gone for this router: drop its health and its condition metric. */
  forgetHealth?: boolean;
  /** A Warning event on the Loop. */
  warning?: { reason: string; message: string };
  log?: { level: 'info' | 'warn'; message: string; fields?: Record<string, unknown> };
  /** A handover waits (the StartThrottled condition, Ready left as the running generation has it); none waits when absent. */
  handover?: { message: string; runningGeneration: number };
}

export function decideLoop(outcome: LoopOutcome): LoopDecision {
  switch (outcome.kind) {
    case 'removed':
      return { step: 'none', forgetHealth: true, ...(outcome.wasRunning ? { log: { level: 'info', message: 'Loop deleted; stopped' } } : {}) };
    case 'still-allowed':
      return { step: 'none' };
    case 'started': {
      const { config } = outcome;
      const fields = { for: config.for, owns: config.owns, url: config.functionUrl, ref: config.functionRef, serviceAccount: config.serviceAccount };
      // Ready comes from the runner once its caches are complete.
      return { step: 'forget', log: { level: 'info', message: 'Loop started', fields } };
    }
    case 'invalid-spec': {
      const { message } = outcome.error;
      const reason = loopSpecErrorReason(outcome.error);
      // Not retried: only an edit of the Loop can fix its spec.
      return { step: 'none', health: { ready: false, reason, message }, warning: { reason, message }, log: { level: 'warn', message: 'Loop has an invalid spec', fields: { err: message } } };
    }
    case 'signing-secret-invalid':
      // The Loop waits (with backoff) for its Secret.
      return { step: 'backoff', health: { ready: false, reason: 'InvalidSigningSecret', message: outcome.message } };
    case 'access-denied': {
      const { message } = outcome;
      // Review again soon (backing off to a minute): RBAC is often created just after the Loop.
      return {
        step: 'backoff',
        health: { ready: false, reason: 'Forbidden', message },
        warning: { reason: 'Forbidden', message },
        log: { level: 'warn', message: 'Loop forbidden; nothing is sent to its function', fields: { err: message } },
      };
    }
    case 'kind-unknown':
      // The CRD may be installed later: look again with backoff.
      return { step: 'backoff', health: { ready: false, reason: 'InvalidSpec', message: outcome.message } };
    case 'watch-forbidden':
      return { step: 'backoff', health: { ready: false, reason: 'Forbidden', message: outcome.message } };
    case 'over-tenant-limit': {
      const { message } = outcome;
      // Not retried: a deleted Loop of the same namespace brings it back (loop-controller.ts).
      return { step: 'none', health: { ready: false, reason: 'TenantLimitExceeded', message }, warning: { reason: 'TenantLimitExceeded', message }, log: { level: 'warn', message: 'Loop over its tenant\'s limit; not run', fields: { err: message } } };
    }
    case 'start-throttled':
      // Requeued for its reserved turn, never dropped. No Warning event: churn would make one per change. A Loop
      // that runs keeps running its older generation until then (as a Deployment keeps its old ReplicaSet):
      // Ready stays as that generation has it, and the StartThrottled condition says what waits.
      if (outcome.handover) return { step: 'after', delayMs: outcome.waitMs, handover: { message: outcome.message, ...outcome.handover } };
      return { step: 'after', delayMs: outcome.waitMs, health: { ready: false, reason: START_THROTTLED, message: outcome.message } };
  }
}

/**
 * The Ready condition to write for a health, or undefined when the condition does not change: only
 * transitions are written (a message that merely changes, with latencies say, is not worth an API write).
 * The writer (lib/kube/conditions.ts) adds lastTransitionTime.
 */
export function readyConditionChange(previous: (LoopHealth & { generation: number }) | undefined, health: LoopHealth, generation: number): ConditionInput | undefined {
  if (previous && previous.ready === health.ready && previous.reason === health.reason && previous.generation === generation) return undefined;
  // A Loop held back by its namespace's start limit is written once, not once per edit: a tenant editing it in a
  // tight loop would otherwise make the router write its status (on the router's own budget) for every edit.
  if (previous?.reason === START_THROTTLED && health.reason === START_THROTTLED && previous.ready === health.ready) return undefined;
  return {
    type: 'Ready',
    status: health.ready ? 'True' : 'False',
    reason: health.reason,
    message: health.message.slice(0, 1024),
    observedGeneration: generation,
  };
}

/** The generation a plan acts on: the spec's it read, else the Loop's as observed. */
export function generationOf(plan: LoopPlan, loop: Loop | undefined): number {
  return plan.kind === 'start' || plan.kind === 'invalid' || plan.kind === 'over-limit' ? plan.generation : (loop?.metadata.generation ?? 0);
}

/** The kinds a Loop watches (kindKey): its primary, its owned kinds and its related kinds. */
export function loopKinds(config: LoopConfig): string[] {
  return [config.for, ...config.owns, ...config.related.map((r) => r.kind)].map((k) => kindKey(k.apiVersion, k.kind));
}
