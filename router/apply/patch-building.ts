// Builds the API writes the router derives from actions: resourceVersion tests, status patches with
// observedGeneration, finalizer patches and the controller ownerReference of created children.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { JsonPatchOperation, KubeObject } from '../../lib/contract/types.ts';
import { controllerReference, controllerUid, jsonEqual } from '../../lib/kube/object-meta.ts';

/** The JSON pointer every resourceVersion test of a patch names. */
export const RV_PATH = '/metadata/resourceVersion';

/** Whether the patch tests the resourceVersion itself (a function may pin its own). */
export function testsResourceVersion(patch: readonly JsonPatchOperation[]): boolean {
  return patch.some((op) => op.op === 'test' && op.path === RV_PATH);
}

/** Whether the patch tests a resourceVersion other than `resourceVersion` (the one the function was sent). */
export function testsOtherResourceVersion(patch: readonly JsonPatchOperation[], resourceVersion: string | undefined): boolean {
  return patch.some((op) => op.op === 'test' && op.path === RV_PATH && op.value !== resourceVersion);
}

/**
 * The patch with its tests of resourceVersion `from` (the version the function was sent, which the SDK's
 * patchAction tests like the router does) moved to `to`, for an answer applied again to a newer version.
 */
export function retestResourceVersion(patch: readonly JsonPatchOperation[], from: string | undefined, to: string | undefined): JsonPatchOperation[] {
  return patch.map((op) => (op.op === 'test' && op.path === RV_PATH && op.value === from ? { ...op, value: to } : op));
}

/** Leads the patch with a test of the resourceVersion the function saw, unless it already tests it. */
export function withResourceVersionTest(patch: JsonPatchOperation[], resourceVersion: string | undefined): JsonPatchOperation[] {
  if (resourceVersion === undefined) return patch;
  if (testsResourceVersion(patch)) return patch;
  return [{ op: 'test', path: RV_PATH, value: resourceVersion }, ...patch];
}

/**
 * The /status JSON patch for a status action, with observedGeneration set from the primary, or undefined
 * when the status would not change (so no write, no event, no new reconcile).
 */
export function statusPatch(primary: KubernetesObject & { status?: unknown }, status: Record<string, unknown>): JsonPatchOperation[] | undefined {
  const generation = primary.metadata?.generation;
  const desired = generation === undefined ? { ...status } : { ...status, observedGeneration: generation };
  if (primary.status !== undefined && jsonEqual(primary.status, desired)) return undefined;
  return withResourceVersionTest([{ op: 'add', path: '/status', value: desired }], primary.metadata?.resourceVersion);
}

export function hasFinalizer(object: KubernetesObject, finalizer: string): boolean {
  return (object.metadata?.finalizers ?? []).includes(finalizer);
}

export function addFinalizerPatch(object: KubernetesObject, finalizer: string): JsonPatchOperation[] {
  const finalizers = object.metadata?.finalizers;
  const ops: JsonPatchOperation[] = finalizers
    ? [{ op: 'add', path: '/metadata/finalizers/-', value: finalizer }]
    : [{ op: 'add', path: '/metadata/finalizers', value: [finalizer] }];
  return withResourceVersionTest(ops, object.metadata?.resourceVersion);
}

/** Removes the finalizer by index, guarded by a test of that index so a concurrent edit cannot shift it. */
export function removeFinalizerPatch(object: KubernetesObject, finalizer: string): JsonPatchOperation[] | undefined {
  const index = (object.metadata?.finalizers ?? []).indexOf(finalizer);
  if (index < 0) return undefined;
  return [
    { op: 'test', path: `/metadata/finalizers/${index}`, value: finalizer },
    { op: 'remove', path: `/metadata/finalizers/${index}` },
  ];
}

/**
 * A copy of a child to create, in the primary's namespace when it names none, with a controller
 * ownerReference to the primary unless it already has a controller (authority checks that it is the primary).
 */
export function prepareChild(object: KubeObject, primary: KubernetesObject, namespaced: boolean): KubeObject {
  const metadata = { ...(object.metadata ?? {}) };
  if (namespaced && !metadata.namespace && primary.metadata?.namespace) metadata.namespace = primary.metadata.namespace;
  const refs = metadata.ownerReferences ?? [];
  if (controllerUid({ metadata }) === undefined) {
    // Replace a non-controller reference to the primary rather than listing the primary twice.
    const others = refs.filter((r) => r.uid !== primary.metadata?.uid);
    metadata.ownerReferences = [...others, controllerReference(primary)];
  }
  return { ...object, metadata };
}
