// Seed 004: an At runs spec.command in a pod once spec.schedule has come, PENDING -> RUNNING -> DONE.
// Level-triggered: the phase is derived from the pod when there is one, so any replayed request converges.
import type { V1Pod } from '@kubernetes/client-node';
import {
  childrenKey,
  conditionsOf,
  create,
  event,
  isControlledBy,
  jsonEqual,
  missingChildren,
  respond,
  statusAction,
  toMetaTime,
  withCondition,
  type Action,
  type ConditionInput,
  type KubeObject,
  type ReconcileRequest,
  type ReconcileResponse,
} from '../../lib/sdk/index.ts';
import {
  PHASE_DONE,
  PHASE_PENDING,
  PHASE_RUNNING,
  type At,
  type AtOutcome,
  type AtPhase,
  type AtStatus,
} from '../../api/at.ts';
import type { AtConfig } from './config.ts';
import { podForAt, podNameOf } from './pod-for-at.ts';
import { parseSchedule, secondsUntil } from './schedule.ts';

export const POD_CHILDREN = childrenKey('v1', 'Pod');
export const DONE_CONDITION = 'Done';

/** The end time of the pod's last container, if the kubelet reported one. */
function finishedAtOf(pod: V1Pod): string | undefined {
  const ends = (pod.status?.containerStatuses ?? [])
    .map((c) => c.state?.terminated?.finishedAt as unknown)
    .filter((t): t is string => typeof t === 'string')
    .sort();
  return ends.at(-1);
}

interface Step {
  status: AtStatus;
  done: ConditionInput;
  actions: Array<Action | undefined>;
  /** Emitted only when the Done condition changes, so replays and resyncs do not repeat it. */
  transitionEvent?: Action;
  extra?: Pick<ReconcileResponse, 'requeueAfterSeconds' | 'error'>;
}

function doneCondition(at: At, status: ConditionInput['status'], reason: string, message: string): ConditionInput {
  const generation = at.metadata?.generation;
  return { type: DONE_CONDITION, status, reason, message, ...(generation === undefined ? {} : { observedGeneration: generation }) };
}

/** The pod exists: follow it, whatever the schedule or the recorded phase say. */
function followPod(at: At, pod: V1Pod, now: string): Step {
  const name = podNameOf(at);
  const startedAt = at.status?.startedAt ?? toMetaTime(String(pod.metadata?.creationTimestamp ?? now));
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') {
    const outcome: AtOutcome = phase;
    const finishedAt = at.status?.finishedAt ?? toMetaTime(finishedAtOf(pod) ?? now);
    const message = `pod ${name} ${outcome === 'Succeeded' ? 'succeeded' : 'failed'}`;
    return {
      status: { phase: PHASE_DONE, outcome, startedAt, finishedAt },
      done: doneCondition(at, 'True', outcome, message),
      actions: [],
      transitionEvent: event(outcome === 'Succeeded' ? 'Normal' : 'Warning', outcome, message),
    };
  }
  return {
    status: { phase: PHASE_RUNNING, startedAt },
    done: doneCondition(at, 'False', 'Running', `pod ${name} is running the command`),
    actions: [],
  };
}

function startPod(at: At, config: AtConfig, now: string): Step {
  const name = podNameOf(at);
  return {
    status: { phase: PHASE_RUNNING, startedAt: at.status?.startedAt ?? now },
    done: doneCondition(at, 'False', 'Running', `pod ${name} is running the command`),
    actions: [create(podForAt(at, config))],
    transitionEvent: event('Normal', 'Started', `schedule ${at.spec?.schedule} reached: creating pod ${name}`),
  };
}

function pending(at: At, config: AtConfig, nowMillis: number, now: string): Step {
  const schedule = at.spec?.schedule;
  const when = parseSchedule(schedule);
  if (when === undefined) {
    // The seed returned the parse error, so controller-runtime retried it with backoff forever.
    const message = `spec.schedule ${JSON.stringify(schedule)} is not an RFC 3339 UTC time such as 2020-11-16T10:12:00Z`;
    return {
      status: { phase: PHASE_PENDING },
      done: doneCondition(at, 'False', 'InvalidSchedule', message),
      actions: [],
      transitionEvent: event('Warning', 'InvalidSchedule', message),
      extra: { error: { type: 'permanent', message } },
    };
  }
  if (nowMillis < when) {
    return {
      status: { phase: PHASE_PENDING },
      done: doneCondition(at, 'False', 'Scheduled', `runs at ${schedule}`),
      actions: [],
      extra: { requeueAfterSeconds: secondsUntil(when, nowMillis) },
    };
  }
  return startPod(at, config, now);
}

export function reconcileAt(request: ReconcileRequest, config: AtConfig): ReconcileResponse {
  const at = request.object as At;
  if (at.metadata?.deletionTimestamp) return respond([]);

  const children = request.children[POD_CHILDREN];
  if (!children) return missingChildren(POD_CHILDREN, 'the At Loop must own v1 Pods');
  // DONE is final, as in the seed: the command ran once; a later edit of the At does not run it again
  // (its status is only written back when observedGeneration has to catch up with the edit).
  const recorded: AtPhase | undefined = at.status?.phase;
  if (recorded === PHASE_DONE) {
    const { observedGeneration: _router, ...done } = at.status ?? {};
    return respond([statusAction(at, done)]);
  }

  const now = toMetaTime(request.now);
  const pod = children.find((p: KubeObject) => p.metadata?.name === podNameOf(at) && isControlledBy(p, at)) as V1Pod | undefined;
  const step = pod
    ? followPod(at, pod, now)
    : recorded === PHASE_RUNNING
      ? startPod(at, config, now) // not seen yet (AlreadyExists makes this a no-op) or deleted (runs again, as a Job would)
      : pending(at, config, Date.parse(request.now), now);

  const before = conditionsOf(at);
  const conditions = withCondition(before, step.done, now);
  const changed = !jsonEqual(before.find((c) => c.type === DONE_CONDITION), conditions.find((c) => c.type === DONE_CONDITION));
  return respond(
    [...step.actions, changed ? step.transitionEvent : undefined, statusAction(at, { ...step.status, conditions })],
    step.extra ?? {},
  );
}
