// Settings of the pod-name-label function: which annotation asks for the label and which label it sets.
// Read once from the environment at start-up; a bad key fails start-up naming the variable.
import { readQualifiedName } from '../env-settings.ts';

export interface PodNameLabelConfig {
  /** Pods with this annotation set to "true" get the label. */
  annotation: string;
  /** The label that holds the pod's name. */
  label: string;
}

export const POD_NAME_LABEL_DEFAULTS: PodNameLabelConfig = Object.freeze({
  annotation: 'kubeloop.dev/add-pod-name-label',
  label: 'kubeloop.dev/pod-name',
});

export const POD_NAME_ANNOTATION_ENV = 'KUBELOOP_POD_NAME_ANNOTATION';
export const POD_NAME_LABEL_ENV = 'KUBELOOP_POD_NAME_LABEL';

export function readPodNameLabelConfig(env: NodeJS.ProcessEnv = process.env): PodNameLabelConfig {
  return Object.freeze({
    annotation: readQualifiedName(env, POD_NAME_ANNOTATION_ENV, POD_NAME_LABEL_DEFAULTS.annotation),
    label: readQualifiedName(env, POD_NAME_LABEL_ENV, POD_NAME_LABEL_DEFAULTS.label),
  });
}
