// Judges a JSON patch by its effect, not its text: two patches are equivalent when they turn the object
// the recorded request showed into the same object and carry the same resourceVersion precondition
// (`add` and `replace` of an existing label, or one op against a map vs. one per key, are then equal).
import fastJsonPatch from 'fast-json-patch';
import type { JsonPatchOperation, KubeObject, ObjectTarget, ReconcileRequest } from '../contract/types.ts';
import { cloneJson } from '../sdk/clone-json.ts';
import { jsonEqual } from '../kube/object-meta.ts';

const { applyPatch } = fastJsonPatch;
const RESOURCE_VERSION = '/metadata/resourceVersion';

/** The resourceVersion a patch tests, or undefined when it tests none. */
export function testedResourceVersion(patch: readonly JsonPatchOperation[]): unknown {
  const test = patch.find((op) => op.op === 'test' && op.path === RESOURCE_VERSION) as { value?: unknown } | undefined;
  return test?.value;
}

/** The object a patch action targets, as the request showed it: the primary or one of its children. */
export function recordedTarget(request: ReconcileRequest, target: ObjectTarget): KubeObject | undefined {
  const primaryNamespace = request.object.metadata?.namespace;
  const matches = (object: KubeObject) =>
    object.apiVersion === target.apiVersion &&
    object.kind === target.kind &&
    object.metadata?.name === target.name &&
    // A target without a namespace is in the primary's, as the router reads it.
    (object.metadata?.namespace ?? undefined) === (target.namespace ?? primaryNamespace);
  if (matches(request.object)) return request.object;
  for (const list of Object.values(request.children)) {
    const found = list.find(matches);
    if (found) return found;
  }
  return undefined;
}

export type PatchOutcome = { ok: true; object: unknown } | { ok: false; error: string };

/** Applies a patch to a copy, as the API server would (a failed `test` or a missing path fails it whole). */
export function applyToCopy(object: KubeObject, patch: readonly JsonPatchOperation[]): PatchOutcome {
  try {
    return { ok: true, object: applyPatch(cloneJson(object), cloneJson(patch as JsonPatchOperation[]), true, true).newDocument };
  } catch (error) {
    return { ok: false, error: (error as Error).message.split('\n')[0] ?? String(error) };
  }
}

/**
 * True when both patches succeed on `object`, leave it equal, and test the same resourceVersion.
 * False when they differ or either fails: the caller then reports the textual difference.
 */
export function patchesEquivalent(object: KubeObject, expected: readonly JsonPatchOperation[], actual: readonly JsonPatchOperation[]): boolean {
  if (!jsonEqual(testedResourceVersion(expected), testedResourceVersion(actual))) return false;
  const want = applyToCopy(object, expected);
  const got = applyToCopy(object, actual);
  return want.ok && got.ok && jsonEqual(want.object, got.object);
}
