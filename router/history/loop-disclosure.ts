// What the history API may tell a caller about a Loop: whether it runs and which kind it reconciles are the
// Loop's own data, told only to who may `get` that Loop. Everyone else gets one and the same 403, whether the
// Loop does not exist, runs elsewhere, or reconciles an object they may not get (issue 38, item 11).
import { CLUSTER_LOOP_PLURAL, LOOP_API_VERSION, LOOP_PLURAL } from '../../api/loop.ts';
import type { ResourceAttributes } from '../../lib/kube/access-review.ts';
import { failure, type Status } from './history-documents.ts';

const LOOP_GROUP = LOOP_API_VERSION.split('/')[0] ?? '';

/** Pure: the SubjectAccessReview attributes of `get` on the Loop by identity; undefined for a malformed one. */
export function loopAttributes(loopId: string): ResourceAttributes | undefined {
  const parts = loopId.split('/');
  if (parts.some((p) => p === '') || parts.length > 2) return undefined;
  const [first, second] = parts as [string, string | undefined];
  if (second === undefined) return { verb: 'get', group: LOOP_GROUP, resource: CLUSTER_LOOP_PLURAL, name: first };
  return { verb: 'get', group: LOOP_GROUP, resource: LOOP_PLURAL, namespace: first, name: second };
}

/**
 * Pure: the one refusal for a caller who may not get the Loop. It repeats only what the caller asked (Loop,
 * namespace, name), never the Loop's kind or whether it runs, so "no such Loop" and "not yours" read the same.
 */
export function notShown(user: string, loopId: string, namespace: string | undefined, name: string): Status {
  const object = `"${name}"${namespace ? ` in namespace "${namespace}"` : ''}`;
  return failure(
    403,
    'Forbidden',
    `user "${user}" cannot get the history of ${object} through Loop ${loopId}: it is shown to who may get the object that Loop reconciles, and whether a Loop runs only to who may get the Loop`,
    name,
  );
}
