// require-label: a validating admission function that denies objects without a label (default "team"),
// naming the label, the object and the namespace so the kubectl user knows what to add.
import { allow, deny, type AdmissionRequest, type AdmissionResponse } from '../../lib/sdk/index.ts';

export interface RequireLabelConfig {
  label: string;
}

export function admitRequireLabel(request: AdmissionRequest, config: RequireLabelConfig): AdmissionResponse {
  // DELETE carries no object: nothing to check.
  const object = request.object;
  if (!object) return allow();
  const value = object.metadata?.labels?.[config.label];
  if (value && value.trim() !== '') return allow();
  const name = object.metadata?.name || `${object.metadata?.generateName ?? ''}*`;
  const where = request.namespace ? ` in namespace ${request.namespace}` : '';
  return deny(`${object.kind} "${name}"${where} needs a "${config.label}" label (add metadata.labels.${config.label})`, {
    reason: 'Invalid',
    code: 422,
    auditAnnotations: { missing: config.label },
  });
}
