// Which Loop or AdmissionHook a command means, in either scope: a namespaced Loop/AdmissionHook is
// `<namespace>/<name>`, a ClusterLoop/ClusterAdmissionHook `<name>` (docs/tenants.md); its API path; and the
// diff flags that name one (--loop NAME -n NS, --cluster-loop NAME, --hook NAME -n NS, --cluster-hook NAME).
import { ADMISSION_HOOK_PLURAL, CLUSTER_ADMISSION_HOOK_PLURAL } from '../api/admission-hook.ts';
import { CLUSTER_LOOP_PLURAL, LOOP_API_VERSION, LOOP_PLURAL, loopIdentity } from '../api/loop.ts';

export type ScopedKind = 'loop' | 'hook';

/** One Loop or hook: `namespace` set for the namespaced kind, absent for the cluster-scoped one. */
export interface ScopedName {
  kind: ScopedKind;
  name: string;
  namespace?: string;
}

/** The kind as users read it: Loop, ClusterLoop, AdmissionHook, ClusterAdmissionHook. */
export function kindName({ kind, namespace }: Pick<ScopedName, 'kind' | 'namespace'>): string {
  const base = kind === 'loop' ? 'Loop' : 'AdmissionHook';
  return namespace === undefined ? `Cluster${base}` : base;
}

/** `<namespace>/<name>` or `<name>`: the identity kubeloop keys, labels and logs a loop or hook by. */
export function identityOf({ name, namespace }: Pick<ScopedName, 'name' | 'namespace'>): string {
  return loopIdentity(namespace, name);
}

/** The object's API path. */
export function scopedPath(ref: ScopedName): string {
  const plural = ref.kind === 'loop' ? (ref.namespace === undefined ? CLUSTER_LOOP_PLURAL : LOOP_PLURAL) : ref.namespace === undefined ? CLUSTER_ADMISSION_HOOK_PLURAL : ADMISSION_HOOK_PLURAL;
  const where = ref.namespace === undefined ? '' : `namespaces/${encodeURIComponent(ref.namespace)}/`;
  return `/apis/${LOOP_API_VERSION}/${where}${plural}/${encodeURIComponent(ref.name)}`;
}

/** "kubectl get loops.kubeloop.dev -n team-a": where a user looks for the objects of that kind and scope. */
export function kubectlGet(ref: ScopedName): string {
  const plural = scopedPath(ref).split('/').at(-2) ?? '';
  return `kubectl get ${plural}.kubeloop.dev${ref.namespace === undefined ? '' : ` -n ${ref.namespace}`}`;
}

/** A namespace's name (RFC 1123 label). */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A Loop's or hook's name (RFC 1123 subdomain). */
export const OBJECT_NAME = /^[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/;

export interface TargetFlags {
  loop?: string | undefined;
  'cluster-loop'?: string | undefined;
  hook?: string | undefined;
  'cluster-hook'?: string | undefined;
  namespace?: string | undefined;
}

/**
 * The one Loop or hook the flags name, or the problem with them: exactly one of the four flags; -n with
 * --loop/--hook (the namespaced kinds, which have no default namespace: a wrong guess would read another
 * team's object), never with the cluster-scoped ones.
 */
export function readTarget(flags: TargetFlags): ScopedName | string {
  const given = (['loop', 'cluster-loop', 'hook', 'cluster-hook'] as const).filter((flag) => flags[flag] !== undefined);
  if (given.length !== 1) return 'give one of --loop NAME -n NAMESPACE, --cluster-loop NAME, --hook NAME -n NAMESPACE, --cluster-hook NAME';
  const [flag] = given as [(typeof given)[number]];
  const name = flags[flag] ?? '';
  const cluster = flag.startsWith('cluster-');
  const kind: ScopedKind = flag.endsWith('loop') ? 'loop' : 'hook';
  if (!OBJECT_NAME.test(name)) return `--${flag}: "${name}" is not an object name`;
  if (cluster && flags.namespace !== undefined) return `--${flag} names a cluster-scoped ${kindName({ kind })}, which has no namespace: drop -n, or use --${kind} ${name} -n ${flags.namespace} for the namespaced ${kindName({ kind, namespace: '' })}`;
  if (cluster) return { kind, name };
  if (flags.namespace === undefined) return `--${flag} ${name} names a namespaced ${kindName({ kind, namespace: '' })}: add -n NAMESPACE (or --cluster-${kind} ${name} for a ${kindName({ kind })})`;
  if (!DNS_LABEL.test(flags.namespace)) return `-n: "${flags.namespace}" is not a namespace name`;
  return { kind, name, namespace: flags.namespace };
}
