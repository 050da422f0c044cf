// Seed 001: a PodSet keeps spec.replicas available pods (Pending or Running, not terminating) and reports
// them in its status. Unlike the seed, scale-down works, and every missing pod is created in one reconcile.
import type { V1Pod } from '@kubernetes/client-node';
import {
  childrenKey,
  conditionsOf,
  create,
  event,
  isControlledBy,
  missingChildren,
  respond,
  statusAction,
  targetOf,
  toMetaTime,
  withCondition,
  type Action,
  type ConditionInput,
  type DeleteAction,
  type KubeObject,
  type ReconcileRequest,
  type ReconcileResponse,
} from '../../lib/sdk/index.ts';
import type { PodSetConfig } from './config.ts';
import { podForPodSet } from './pod-for-podset.ts';
import { MAX_REPLICAS, MIN_REPLICAS, type PodSet, type PodSetStatus } from '../../api/podset.ts';

export const POD_CHILDREN = childrenKey('v1', 'Pod');

function phaseOf(pod: KubeObject): string {
  // The API server sets Pending on create; a pod without a phase has not been looked at yet.
  return (pod as V1Pod).status?.phase ?? 'Pending';
}

function timeOf(value: unknown): number {
  const millis = value === undefined ? NaN : Date.parse(String(value instanceof Date ? value.toISOString() : value));
  return Number.isNaN(millis) ? 0 : millis;
}

/** The seed's "available": Pending or Running, and not being deleted. */
export function isAvailable(pod: KubeObject): boolean {
  if (pod.metadata?.deletionTimestamp) return false;
  const phase = phaseOf(pod);
  return phase === 'Pending' || phase === 'Running';
}

/** Which surplus pods go first: Pending before Running (they do no work yet), then the newest. */
export function scaleDownOrder(a: KubeObject, b: KubeObject): number {
  const rank = (pod: KubeObject) => (phaseOf(pod) === 'Pending' ? 0 : 1);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  const age = timeOf(b.metadata?.creationTimestamp) - timeOf(a.metadata?.creationTimestamp);
  if (age !== 0) return age;
  // Same second: any fixed order will do, as long as a replayed request picks the same pods.
  const [nameA, nameB] = [a.metadata?.name ?? '', b.metadata?.name ?? ''];
  return nameA === nameB ? 0 : nameA < nameB ? 1 : -1;
}

/** Deletes guarded by uid only: a resourceVersion precondition would fail on every pod status change. */
function deletePod(pod: KubeObject): DeleteAction {
  const uid = pod.metadata?.uid;
  return { op: 'delete', target: targetOf(pod), preconditions: uid === undefined ? {} : { uid } };
}

function readyCondition(podset: PodSet, available: number, replicas: number): ConditionInput {
  const message = `${available} available, ${replicas} desired`;
  const generation = podset.metadata?.generation;
  const base = generation === undefined ? {} : { observedGeneration: generation };
  if (available === replicas) return { type: 'Ready', status: 'True', reason: 'AllPodsAvailable', message, ...base };
  const reason = available < replicas ? 'ScalingUp' : 'ScalingDown';
  return { type: 'Ready', status: 'False', reason, message, ...base };
}

function invalidReplicas(replicas: unknown): ReconcileResponse {
  const message = `spec.replicas must be an integer from ${MIN_REPLICAS} to ${MAX_REPLICAS}, got ${JSON.stringify(replicas)}`;
  return respond([event('Warning', 'InvalidReplicas', message)], { error: { type: 'permanent', message } });
}

/** The contract's limit on an event message. */
const MAX_EVENT_MESSAGE = 1024;

/** "a, b, c" within `budget` characters; names that do not fit become "and N more". */
export function nameList(names: string[], budget: number): string {
  let out = '';
  for (const [i, name] of names.entries()) {
    const piece = i === 0 ? name : `, ${name}`;
    const more = `, and ${names.length - i} more`;
    const remainingAfter = names.length - i - 1;
    // Keep room to say how many were left out, unless this is the last name.
    if (out.length + piece.length + (remainingAfter > 0 ? `, and ${remainingAfter} more`.length : 0) > budget) {
      return i === 0 ? `${names.length} pods` : `${out}${more}`;
    }
    out += piece;
  }
  return out;
}

export function reconcilePodSet(request: ReconcileRequest, config: PodSetConfig): ReconcileResponse {
  const podset = request.object as PodSet;
  // Owned pods are garbage-collected through their ownerReferences; nothing to do for a deleted PodSet.
  if (podset.metadata?.deletionTimestamp) return respond([]);

  const children = request.children[POD_CHILDREN];
  if (!children) return missingChildren(POD_CHILDREN, 'the PodSet Loop must own v1 Pods');

  const replicas = podset.spec?.replicas ?? MIN_REPLICAS;
  if (!Number.isInteger(replicas) || replicas < MIN_REPLICAS || replicas > MAX_REPLICAS) return invalidReplicas(replicas);

  const available = children.filter((pod) => isControlledBy(pod, podset) && isAvailable(pod));
  const actions: Array<Action | undefined> = [];

  if (available.length < replicas) {
    const missing = replicas - available.length;
    for (let i = 0; i < missing; i++) actions.push(create(podForPodSet(podset, config)));
    actions.push(event('Normal', 'ScalingUp', `creating ${missing} pod(s): ${available.length} available, ${replicas} desired`));
  } else if (available.length > replicas) {
    // The seed nested this branch inside the scale-up branch, where it could never run.
    const surplus = [...available].sort(scaleDownOrder).slice(0, available.length - replicas);
    for (const pod of surplus) actions.push(deletePod(pod));
    const tail = `: ${available.length} available, ${replicas} desired`;
    const head = `deleting ${surplus.length} pod(s) (`;
    const names = nameList(surplus.map((pod) => pod.metadata?.name ?? ''), MAX_EVENT_MESSAGE - head.length - tail.length - 1);
    actions.push(event('Normal', 'ScalingDown', `${head}${names})${tail}`));
  }

  // Status reports what was observed; the pods created above have no names until the API server gives them.
  const status: PodSetStatus = {
    podNames: available.map((pod) => pod.metadata?.name ?? '').sort(),
    availableReplicas: available.length,
    conditions: withCondition(conditionsOf(podset), readyCondition(podset, available.length, replicas), toMetaTime(request.now)),
  };
  actions.push(statusAction(podset, { ...status }));
  return respond(actions);
}
