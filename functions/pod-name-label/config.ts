// Settings of the pod-name-label function: which annotation asks for the label and which label it sets.
// Read once from the environment at start-up; a bad key fails start-up naming the variable.

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

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Why `key` is not a valid label or annotation key ("prefix/name"), or undefined when it is. */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'has more than one "/"';
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const prefix = parts.length === 2 ? parts[0]! : undefined;
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `prefix "${prefix}" must be a DNS subdomain (lower-case, at most 253 characters)`;
  }
  if (name.length === 0 || name.length > 63) return `name part "${name}" must have 1 to 63 characters`;
  if (!NAME_PART.test(name)) return `name part "${name}" must be alphanumeric with '-', '_' or '.' inside`;
  return undefined;
}

function keyFrom(env: NodeJS.ProcessEnv, variable: string, fallback: string): string {
  const value = env[variable]?.trim();
  if (value === undefined || value === '') return fallback;
  const problem = qualifiedNameProblem(value);
  if (problem) throw new Error(`${variable}="${value}" is not a valid Kubernetes label/annotation key: ${problem}`);
  return value;
}

export function readPodNameLabelConfig(env: NodeJS.ProcessEnv = process.env): PodNameLabelConfig {
  return Object.freeze({
    annotation: keyFrom(env, POD_NAME_ANNOTATION_ENV, POD_NAME_LABEL_DEFAULTS.annotation),
    label: keyFrom(env, POD_NAME_LABEL_ENV, POD_NAME_LABEL_DEFAULTS.label),
  });
}
