// Seeds 000/002: a pod annotated "<annotation>: true" carries "<label>: <pod name>"; any other pod does not.
// Needs only metadata, so its Loop can watch pods metadata-only (PartialObjectMetadata).
import { event, patchAction, respond, type KubeObject, type ReconcileRequest, type ReconcileResponse } from '../../lib/sdk/index.ts';
import type { PodNameLabelConfig } from './config.ts';

/** A label value is at most 63 characters; a pod name may have up to 253. */
export const MAX_LABEL_VALUE_LENGTH = 63;

export function reconcilePodNameLabel(request: ReconcileRequest, config: PodNameLabelConfig): ReconcileResponse {
  const pod: KubeObject = request.object;
  const metadata = pod.metadata ?? {};
  // A pod on its way out needs no label; patching it would only race the deletion.
  if (metadata.deletionTimestamp || request.trigger.type === 'DELETED') return respond([]);

  const name = metadata.name;
  if (!name) return respond([], { error: { type: 'permanent', message: 'the pod has no metadata.name' } });

  const wanted = metadata.annotations?.[config.annotation] === 'true';
  const current = metadata.labels?.[config.label];

  if (wanted) {
    if (current === name) return respond([]);
    if (name.length > MAX_LABEL_VALUE_LENGTH) {
      // The seed would send the update, get 422 Invalid and retry it forever.
      return respond([
        event(
          'Warning',
          'PodNameTooLong',
          `pod name "${name}" has ${name.length} characters; label ${config.label} cannot hold it ` +
            `(a label value has at most ${MAX_LABEL_VALUE_LENGTH})`,
        ),
      ]);
    }
    return respond([
      patchAction(pod, (draft) => {
        draft.metadata = { ...draft.metadata, labels: { ...draft.metadata?.labels, [config.label]: name } };
      }),
    ]);
  }

  // Unlike the seed, a label with a stale value is removed too: without the annotation the label is absent.
  if (current === undefined) return respond([]);
  return respond([
    patchAction(pod, (draft) => {
      delete draft.metadata?.labels?.[config.label];
    }),
  ]);
}
