// Helpers that reconcile functions use to build contract actions without hand-writing JSON patches.
import type { V1OwnerReference } from '@kubernetes/client-node';
import fastJsonPatch from 'fast-json-patch';
import type {
  Action,
  CreateAction,
  DeleteAction,
  EventAction,
  EventType,
  JsonPatchOperation,
  KubeObject,
  ObjectTarget,
  PatchAction,
  ReconcileResponse,
  StatusAction,
} from '../contract/types.ts';
import { CONTRACT_API_VERSION } from '../contract/types.ts';
import { controllerReference, controllerUid, jsonEqual, pointerEscape } from '../kube/object-meta.ts';
import { cloneJson } from './clone-json.ts';

const { compare } = fastJsonPatch;

export function targetOf(object: KubeObject): ObjectTarget {
  const name = object.metadata?.name;
  if (!object.apiVersion || !object.kind || !name) {
    throw new Error('object needs apiVersion, kind and metadata.name to be a target');
  }
  const namespace = object.metadata?.namespace;
  return namespace
    ? { apiVersion: object.apiVersion, kind: object.kind, namespace, name }
    : { apiVersion: object.apiVersion, kind: object.kind, name };
}

/**
 * The RFC 6902 operations that turn `object` into `mutate(copy)`, led by a test of
 * /metadata/resourceVersion so a patch computed from a stale read fails instead of overwriting.
 * Returns [] when the mutation changes nothing.
 */
export function patchOf<T extends KubeObject>(object: T, mutate: (draft: T) => void): JsonPatchOperation[] {
  const draft = cloneJson(object);
  mutate(draft);
  const operations = compare(object, draft);
  if (operations.length === 0) return [];
  const resourceVersion = object.metadata?.resourceVersion;
  if (resourceVersion === undefined) return operations;
  return [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...operations];
}

/** A patch action on `object`, or undefined when `mutate` changes nothing. */
export function patchAction<T extends KubeObject>(object: T, mutate: (draft: T) => void): PatchAction | undefined {
  const patch = patchOf(object, mutate);
  return patch.length === 0 ? undefined : { op: 'patch', target: targetOf(object), patch };
}

/** Escapes a map key (label, annotation) for use in a JSON pointer. */
export { pointerEscape };

export function controllerReferenceTo(owner: KubeObject): V1OwnerReference {
  if (!owner.metadata?.uid || !owner.metadata.name) throw new Error('owner needs metadata.name and metadata.uid');
  return controllerReference(owner);
}

export function isControlledBy(child: KubeObject, owner: KubeObject): boolean {
  const uid = controllerUid(child);
  return uid !== undefined && uid === owner.metadata?.uid;
}

export function create(object: KubeObject): CreateAction {
  return { op: 'create', object };
}

export function remove(object: KubeObject): DeleteAction {
  const uid = object.metadata?.uid;
  const resourceVersion = object.metadata?.resourceVersion;
  const preconditions = {
    ...(uid === undefined ? {} : { uid }),
    ...(resourceVersion === undefined ? {} : { resourceVersion }),
  };
  return { op: 'delete', target: targetOf(object), preconditions };
}

export function event(type: EventType, reason: string, message: string): EventAction {
  return { op: 'event', type, reason, message };
}

/** Deep equality of two JSON values, ignoring key order (lib/kube/object-meta.ts). */
export { jsonEqual };

/**
 * A status action, or undefined when `desired` equals the object's current status
 * (ignoring observedGeneration, which the router maintains), so unchanged status is never written.
 * A status whose observedGeneration lags metadata.generation is written anyway: the router sets
 * observedGeneration only when it writes status, so otherwise it would never catch up with a spec edit.
 */
export function statusAction(object: KubeObject, desired: Record<string, unknown>): StatusAction | undefined {
  const current = { ...((object.status as Record<string, unknown> | undefined) ?? {}) };
  const observed = current.observedGeneration;
  delete current.observedGeneration;
  const wanted = { ...desired };
  delete wanted.observedGeneration;
  const generation = object.metadata?.generation;
  const lagging = generation !== undefined && observed !== generation;
  return !lagging && jsonEqual(current, wanted) ? undefined : { op: 'status', status: desired };
}

/** Builds a response, dropping the undefined entries that the helpers above return for "nothing to do". */
export function respond(
  actions: Array<Action | undefined>,
  extra: Omit<ReconcileResponse, 'apiVersion' | 'kind' | 'actions'> = {},
): ReconcileResponse {
  return {
    apiVersion: CONTRACT_API_VERSION,
    kind: 'ReconcileResponse',
    actions: actions.filter((a): a is Action => a !== undefined),
    ...extra,
  };
}

/**
 * The reply when `request.children[key]` is absent: the Loop does not own that kind, and acting without
 * seeing the existing children would create them again on every reconcile. Permanent: a retry cannot help.
 * `fix` says what the Loop must own, e.g. "the PodSet Loop must own v1 Pods".
 */
export function missingChildren(key: string, fix: string): ReconcileResponse {
  return respond([], { error: { type: 'permanent', message: `the request has no children["${key}"]: ${fix}` } });
}
