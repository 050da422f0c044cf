// Event filters applied before anything reaches the queue: namespaces, label selector, and the
// generation predicate (ignoreStatusChanges) that stops status-only churn from re-triggering (MC #171).
import type { KubernetesObject } from '@kubernetes/client-node';
import { matchesLabelSelector } from '../../lib/kube/label-selector.ts';
import { jsonEqual, jsonEqualExcept } from '../../lib/kube/object-meta.ts';
import type { LoopConfig } from './loop-spec.ts';

/** Whether the Loop is interested in this primary at all. */
export function selectsPrimary(loop: Pick<LoopConfig, 'namespaces' | 'selector'>, object: KubernetesObject): boolean {
  const namespace = object.metadata?.namespace;
  if (loop.namespaces && !(namespace !== undefined && loop.namespaces.has(namespace))) return false;
  return matchesLabelSelector(loop.selector, object.metadata?.labels);
}

/** Whether the Loop watches children in this namespace (children follow the Loop's namespaces). */
export function selectsNamespace(loop: Pick<LoopConfig, 'namespaces'>, namespace: string | undefined): boolean {
  return !loop.namespaces || (namespace !== undefined && loop.namespaces.has(namespace));
}

function sameJson(a: unknown, b: unknown): boolean {
  return jsonEqual(a ?? null, b ?? null);
}

/** Whether two versions of an object differ in metadata.resourceVersion and managedFields alone. */
export function onlyBookkeepingChanged(previous: KubernetesObject, current: KubernetesObject): boolean {
  // Compared in place: copying both objects without those keys cost as much as parsing the watch event.
  return jsonEqualExcept(previous, current, METADATA) && jsonEqualExcept(previous.metadata, current.metadata, BOOKKEEPING);
}

const METADATA = ['metadata'];
const BOOKKEEPING = ['resourceVersion', 'managedFields'];

/**
 * Whether an update of a primary should trigger a call. With ignoreStatusChanges, an update that leaves
 * metadata.generation unchanged is skipped unless something a controller reacts to in metadata changed
 * (labels, annotations, finalizers, owners, deletion). Unlike controller-runtime's GenerationChangedPredicate,
 * metadata changes still trigger: decorator-style functions (pod-name-label) react exactly to those.
 */
export function updateTriggers(
  loop: Pick<LoopConfig, 'ignoreStatusChanges'> & { metadataOnly?: boolean },
  previous: KubernetesObject,
  current: KubernetesObject,
): boolean {
  const before = previous.metadata;
  const after = current.metadata;
  if (before?.resourceVersion !== undefined && before.resourceVersion === after?.resourceVersion) return false;
  // A metadata-only Loop's function sees nothing but metadata: a status write (kwok, the kubelet) shows up
  // as a new resourceVersion alone and would only repeat the last call.
  if (loop.metadataOnly && onlyBookkeepingChanged(previous, current)) return false;
  if (!loop.ignoreStatusChanges) return true;
  if (before?.generation === undefined || after?.generation === undefined) return true;
  if (before.generation !== after.generation) return true;
  return (
    !sameJson(before.labels, after.labels) ||
    !sameJson(before.annotations, after.annotations) ||
    !sameJson(before.finalizers, after.finalizers) ||
    !sameJson(before.ownerReferences, after.ownerReferences) ||
    before.deletionTimestamp !== after.deletionTimestamp
  );
}
