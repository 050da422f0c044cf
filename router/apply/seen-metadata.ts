// What a metadata-only Loop's patch of its primary is tested against: the metadata its function saw, not
// the resourceVersion, so a status write or a binding it never sees does not make the server refuse it.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { JsonPatchOperation } from '../../lib/contract/types.ts';
import { jsonEqual, pointerEscape } from '../../lib/kube/object-meta.ts';
import { RV_PATH, testsOtherResourceVersion, withResourceVersionTest } from './patch-building.ts';

/**
 * Metadata fields no test needs: bookkeeping no function reads (as onlyBookkeepingChanged says), the uid
 * (tested first, on its own) and what a write cannot change: the name and namespace are in the URL and the
 * creation time is immutable, so an object with the same uid has the same ones.
 */
const UNTESTED = new Set(['resourceVersion', 'managedFields', 'uid', 'name', 'namespace', 'creationTimestamp']);

/**
 * The fields a write can set on an object that lacks them: tested as absent (`value: null`, which the API
 * server's JSON patch holds true of a missing member only) when the function saw none. Not generation (a kind
 * without it never gets it) nor deletionGracePeriodSeconds (a deletion sets it with deletionTimestamp).
 */
const SETTABLE = ['labels', 'annotations', 'finalizers', 'ownerReferences', 'deletionTimestamp', 'generateName'];

/**
 * The tests that hold exactly while the object is, but for resourceVersion and managedFields, the one the
 * function saw: the uid first (a recreated object under the same name never takes the patch), then every other
 * field it was sent, and null for each settable field it was sent without.
 */
export function seenMetadataTests(seen: KubernetesObject): JsonPatchOperation[] {
  const metadata = (seen.metadata ?? {}) as Record<string, unknown>;
  const tests: JsonPatchOperation[] = metadata.uid === undefined ? [] : [{ op: 'test', path: '/metadata/uid', value: metadata.uid }];
  // for-in and indexed loops: built for every patch of a primary, where Object.entries would allocate an array per field.
  for (const key in metadata) {
    const value = metadata[key];
    if (Object.hasOwn(metadata, key) && value !== undefined && !UNTESTED.has(key)) tests.push({ op: 'test', path: `/metadata/${pointerEscape(key)}`, value });
  }
  for (let i = 0; i < SETTABLE.length; i++) {
    const key = SETTABLE[i]!;
    if (metadata[key] === undefined) tests.push({ op: 'test', path: `/metadata/${key}`, value: null });
  }
  return tests;
}

/**
 * A metadata-only Loop's patch of its primary as sent: led by the tests of what the function saw (`guards`,
 * which also decide whether a refusal was a stale write), without the test of the resourceVersion it was sent
 * (the SDK's patchAction writes one), and without a second test of a path the patch tests itself (an
 * annotations map is sent once). A patch pinning another resourceVersion is not for this: it keeps its pin.
 */
export function testedAsSeen(patch: readonly JsonPatchOperation[], seen: KubernetesObject): { patch: JsonPatchOperation[]; guards: JsonPatchOperation[] } {
  const sent = seen.metadata?.resourceVersion;
  const own = patch.filter((op) => !(op.op === 'test' && op.path === RV_PATH && op.value === sent));
  const guards = seenMetadataTests(seen);
  // A patch holds a few operations: a scan of them per guard costs less than a Set of their paths.
  const sending: JsonPatchOperation[] = [];
  for (let i = 0; i < guards.length; i++) if (!testsPath(own, guards[i]!.path)) sending.push(guards[i]!);
  for (let i = 0; i < own.length; i++) sending.push(own[i]!);
  return { patch: sending, guards };
}

/** Whether `patch` has a test of `path`. */
function testsPath(patch: readonly JsonPatchOperation[], path: string): boolean {
  for (let i = 0; i < patch.length; i++) if (patch[i]!.op === 'test' && patch[i]!.path === path) return true;
  return false;
}

/** A JSON patch and, unless they are its resourceVersion tests, the tests that tell a stale write (json-patch.ts). */
export interface PatchToSend {
  patch: JsonPatchOperation[];
  guards?: JsonPatchOperation[];
}

/**
 * A function's patch of its primary as the router sends it: a metadata-only Loop's tested against what its
 * function saw, unless it pins a resourceVersion of its own (kept, as is); any other Loop's led by a test of
 * the resourceVersion it was sent, unless it tests one itself.
 */
export function primaryPatch(metadataOnly: boolean, patch: JsonPatchOperation[], seen: KubernetesObject): PatchToSend {
  const sent = seen.metadata?.resourceVersion;
  if (metadataOnly && !testsOtherResourceVersion(patch, sent)) return testedAsSeen(patch, seen);
  return { patch: withResourceVersionTest(patch, sent) };
}

/**
 * The first of `guards` (tests of top-level metadata fields, as built here or a resourceVersion test) that
 * `object` fails, or undefined when it passes them all: a refused patch whose guards the current object fails
 * was refused because the object changed since the function saw it.
 */
export function failedGuard(guards: readonly JsonPatchOperation[], object: Pick<KubernetesObject, 'metadata'>): JsonPatchOperation | undefined {
  const metadata = (object.metadata ?? {}) as Record<string, unknown>;
  return guards.find((test) => {
    const key = metadataKey(test.path);
    // jsonEqual reads absent as null, as the server's test does.
    return key !== undefined && !jsonEqual(metadata[key], (test as { value?: unknown }).value);
  });
}

/** "labels" of "/metadata/labels"; undefined for any deeper or other path. */
function metadataKey(path: string): string | undefined {
  const match = /^\/metadata\/([^/]+)$/.exec(path);
  return match?.[1]?.replace(/~1/g, '/').replace(/~0/g, '~');
}
