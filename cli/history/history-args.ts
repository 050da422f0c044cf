// Which Loop and which object `kubeloop history` means, from its arguments: kubectl's way (`--loop NAME -n NS
// NAME`, `--cluster-loop NAME [-n NS] NAME`) or the positional identity (`LOOP [NS/]NAME`). Pure, so every
// combination is unit-tested; a string is the usage problem to print (exit 2).
import { loopIdentity } from '../../api/loop.ts';
import { DNS_LABEL, OBJECT_NAME } from '../scoped-names.ts';

export interface HistoryArgs {
  loop?: string | undefined;
  'cluster-loop'?: string | undefined;
  namespace?: string | undefined;
}

export interface HistoryTarget {
  /** The Loop's identity as the router keys it: `<namespace>/<name>` for a Loop, `<name>` for a ClusterLoop. */
  loop: string;
  /** The object's namespace; absent for a cluster-scoped kind. */
  namespace?: string;
  name: string;
}

// An object of a custom kind may have a name kubectl accepts but DNS-1123 does not (upper case, ':'); only
// what cannot be one path segment is refused here, the API server judges the rest.
const ANY_NAME = /^[^/\s]+$/;

/**
 * A namespaced Loop reconciles objects of its own namespace only (docs/tenants.md), so `-n` names both the
 * object's namespace and the Loop's: `--loop podset -n team-a web` is Loop team-a/podset, object team-a/web.
 */
export function readHistoryTarget(positionals: readonly string[], flags: HistoryArgs): HistoryTarget | string {
  const loopFlags = (['loop', 'cluster-loop'] as const).filter((flag) => flags[flag] !== undefined);
  if (loopFlags.length > 1) return 'give either --loop NAME (a namespaced Loop) or --cluster-loop NAME (a ClusterLoop), not both';
  const byFlag = loopFlags.length === 1;
  const [first, second, ...rest] = positionals;
  const object = byFlag ? first : second;
  const extra = byFlag ? [second, ...rest].filter((p) => p !== undefined) : rest;
  if (extra.length > 0) return `unexpected argument "${extra[0]}"${byFlag ? ` (the Loop is already named by --${loopFlags[0]})` : ''}`;
  if (object === undefined) return byFlag ? 'name the object: kubeloop history --loop NAME -n NAMESPACE OBJECT' : 'give the Loop and the object: kubeloop history --loop NAME -n NAMESPACE OBJECT, or kubeloop history LOOP NAMESPACE/NAME';

  const parts = object.split('/');
  if (parts.length > 2 || parts.some((p) => !ANY_NAME.test(p))) return `"${object}" is not NAMESPACE/NAME or NAME`;
  const [objectNamespace, name] = parts.length === 2 ? (parts as [string, string]) : [undefined, parts[0] as string];
  if (objectNamespace !== undefined && flags.namespace !== undefined && objectNamespace !== flags.namespace) return `the object "${object}" is in namespace ${objectNamespace}, but -n says ${flags.namespace}: give one of them`;
  const namespace = objectNamespace ?? flags.namespace;
  if (namespace !== undefined && !DNS_LABEL.test(namespace)) return `"${namespace}" is not a namespace name`;

  const loop = loopFrom(byFlag ? loopFlags[0] : undefined, byFlag ? flags[loopFlags[0]!] : first, namespace);
  if ('problem' in loop) return loop.problem;
  return { loop: loop.identity, ...(namespace !== undefined ? { namespace } : {}), name };
}

function loopFrom(flag: 'loop' | 'cluster-loop' | undefined, value: string | undefined, objectNamespace: string | undefined): { identity: string } | { problem: string } {
  const given = value ?? '';
  if (flag === 'cluster-loop') {
    if (given.includes('/')) return { problem: `--cluster-loop names a ClusterLoop, which has no namespace: for the namespaced Loop ${given} use --loop ${given.split('/')[1] ?? ''} -n ${given.split('/')[0] ?? ''}` };
    return OBJECT_NAME.test(given) ? { identity: given } : { problem: `--cluster-loop: "${given}" is not a ClusterLoop name` };
  }
  if (flag === 'loop') {
    const [loopNamespace, name] = given.includes('/') ? (given.split('/', 2) as [string, string]) : [undefined, given];
    if (!OBJECT_NAME.test(name)) return { problem: `--loop: "${given}" is not a Loop name` };
    const namespace = loopNamespace ?? objectNamespace;
    if (namespace === undefined) return { problem: `--loop ${given} names a namespaced Loop: add -n NAMESPACE (the namespace of the Loop and its objects), or use --cluster-loop ${given} for a ClusterLoop` };
    if (objectNamespace === undefined) return { problem: `the namespaced Loop ${loopIdentity(namespace, name)} reconciles objects of namespace ${namespace} only: add -n ${namespace}` };
    if (namespace !== objectNamespace) return { problem: `the namespaced Loop ${loopIdentity(namespace, name)} reconciles objects of namespace ${namespace} only, not of ${objectNamespace}` };
    return { identity: loopIdentity(namespace, name) };
  }
  // The positional identity: `<name>` for a ClusterLoop, `<namespace>/<name>` for a Loop.
  const identity = given.split('/');
  if (identity.length > 2 || !identity.every((p, i) => (i === 0 && identity.length === 2 ? DNS_LABEL : OBJECT_NAME).test(p))) return { problem: `"${given}" is not a Loop identity (NAME for a ClusterLoop, NAMESPACE/NAME for a Loop)` };
  return { identity: given };
}
