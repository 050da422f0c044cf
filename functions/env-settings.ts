// Readers for the functions' environment settings; each names the variable when its value is unusable,
// so a misconfigured function fails at start-up instead of writing bad objects.

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// registry/path:tag@digest, loosely: what matters here is no spaces, no upper case in the path, no empty parts.
const IMAGE_REFERENCE = /^[a-z0-9]+([._\-/:][a-z0-9]+)*(:[\w][\w.-]{0,127})?(@[a-z0-9]+:[a-f0-9]{32,})?$/;

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

function setting(env: NodeJS.ProcessEnv, variable: string): string | undefined {
  const value = env[variable]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A label or annotation key from `variable`, or `fallback` when unset. */
export function readQualifiedName(env: NodeJS.ProcessEnv, variable: string, fallback: string): string {
  const value = setting(env, variable);
  if (value === undefined) return fallback;
  const problem = qualifiedNameProblem(value);
  if (problem) throw new Error(`${variable}="${value}" is not a valid Kubernetes label/annotation key: ${problem}`);
  return value;
}

/** A container image reference from `variable`, or `fallback` when unset. */
export function readImageReference(env: NodeJS.ProcessEnv, variable: string, fallback: string): string {
  const value = setting(env, variable);
  if (value === undefined) return fallback;
  if (value.length > 4096 || !IMAGE_REFERENCE.test(value)) {
    throw new Error(`${variable}="${value}" is not a container image reference (e.g. "busybox:1.36" or "registry.local/tools/busybox:1.36")`);
  }
  return value;
}
