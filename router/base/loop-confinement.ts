// A namespaced Loop's confinement to its own namespace (docs/tenants.md): the namespaces its spec may omit or
// must not leave, the scope of its kinds once discovery resolved them, and where each of its writes may land.
// Pure; loop-spec.ts, the Loop controller and the apply stage use it.
import type { FunctionVersion, LoopSpec } from '../../api/loop.ts';
import type { KindRef } from '../../api/meta.ts';

/** The first field of a namespaced Loop's spec that reaches out of its namespace, and why. */
export interface ConfinementProblem {
  field: string;
  problem: string;
}

const elsewhere = (own: string, value: unknown, what: string): string =>
  `${JSON.stringify(value)}: a Loop ${what} its own namespace (${own}) only; omit the namespace or set "${own}" (a ClusterLoop may reach other namespaces)`;

/** A namespace a Loop may name: absent (its own) or its own, spelled out. */
function ownNamespace(own: string, value: unknown): boolean {
  return value === undefined || value === own;
}

/**
 * The spec with each namespace a Loop may omit set to its own, or the first field naming another: spec.namespaces
 * (absent or exactly [own]), the ServiceAccount, the function reference, the signing Secret, and every related
 * entry (absent or own; "*" reaches all namespaces and is refused).
 */
export function confineLoopSpec(own: string, spec: Partial<LoopSpec>): { spec: Partial<LoopSpec> } | ConfinementProblem {
  const namespaces = spec.namespaces;
  if (namespaces !== undefined && namespaces.length > 0 && !(namespaces.length === 1 && namespaces[0] === own)) {
    return { field: 'spec.namespaces', problem: elsewhere(own, namespaces, 'watches') };
  }
  const account = spec.serviceAccount as Partial<LoopSpec['serviceAccount'] & object> | undefined;
  if (account && typeof account === 'object' && !ownNamespace(own, account.namespace)) {
    return { field: 'spec.serviceAccount.namespace', problem: elsewhere(own, account.namespace, 'acts as a ServiceAccount of') };
  }
  const fn = spec.function && typeof spec.function === 'object' ? spec.function : undefined;
  // The function, its shadow and its canary: each one's ref and signing Secret in the Loop's own namespace.
  const live = confineFunction(own, 'spec.function', fn);
  if ('problem' in live) return live;
  const versions: Partial<Pick<LoopSpec['function'], 'shadow' | 'canary'>> = {};
  for (const which of ['shadow', 'canary'] as const) {
    const version = fn?.[which];
    if (!version || typeof version !== 'object') continue;
    const confined = confineFunction(own, `spec.function.${which}`, version);
    if ('problem' in confined) return confined;
    Object.assign(versions, { [which]: { ...version, ...confined.fields } });
  }
  const related = Array.isArray(spec.related) ? spec.related : [];
  for (const [i, entry] of related.entries()) {
    const ns = entry && typeof entry === 'object' ? entry.namespace : undefined;
    if (!ownNamespace(own, ns) && ns !== '') return { field: `spec.related[${i}].namespace`, problem: elsewhere(own, ns, 'reads related objects in') };
  }
  return {
    spec: {
      ...spec,
      namespaces: [own],
      ...(account && typeof account === 'object' ? { serviceAccount: { ...account, namespace: own } as LoopSpec['serviceAccount'] } : {}),
      ...(fn ? { function: { ...fn, ...live.fields, ...versions } } : {}),
      // Absent is the primary's namespace, which is the Loop's own.
      ...(spec.related !== undefined ? { related: related.map((entry) => (entry && typeof entry === 'object' ? { ...entry, namespace: undefined } : entry)) } : {}),
    },
  };
}

/** One version's ref and signing Secret with the Loop's namespace filled in, or the field naming another. */
function confineFunction(own: string, field: string, fn: FunctionVersion | undefined): { fields: Pick<FunctionVersion, 'ref' | 'signingSecretRef'> } | ConfinementProblem {
  const ref = fn?.ref;
  if (ref && typeof ref === 'object' && !ownNamespace(own, ref.namespace)) return { field: `${field}.ref.namespace`, problem: elsewhere(own, ref.namespace, 'calls a function of') };
  const secret = fn?.signingSecretRef;
  if (secret && typeof secret === 'object' && !ownNamespace(own, secret.namespace)) {
    return { field: `${field}.signingSecretRef.namespace`, problem: elsewhere(own, secret.namespace, 'reads its signing Secret in') };
  }
  return {
    fields: {
      ...(ref && typeof ref === 'object' ? { ref: { ...ref, namespace: own } } : {}),
      ...(secret && typeof secret === 'object' ? { signingSecretRef: { ...secret, namespace: own } } : {}),
    },
  };
}

/** A kind a Loop names, with the field naming it and its scope as discovery resolved it. */
export interface ResolvedKind {
  field: string;
  ref: KindRef;
  namespaced: boolean;
}

/** The kinds of a spec and the fields naming them: spec.for, each spec.owns entry, each spec.related entry. */
export function namedKinds(config: { for: KindRef; owns: readonly KindRef[]; related: ReadonlyArray<{ kind: KindRef }> }): Array<{ field: string; ref: KindRef }> {
  return [
    { field: 'spec.for', ref: config.for },
    ...config.owns.map((ref, i) => ({ field: `spec.owns[${i}]`, ref })),
    ...config.related.map((relation, i) => ({ field: `spec.related[${i}]`, ref: relation.kind })),
  ];
}

/** A Loop lives in a namespace and reaches nothing outside it: a cluster-scoped kind anywhere in its spec is refused. */
export function clusterScopedKindProblem(kinds: readonly ResolvedKind[]): ConfinementProblem | undefined {
  const scoped = kinds.find((k) => !k.namespaced);
  if (!scoped) return undefined;
  return {
    field: scoped.field,
    problem: `${scoped.ref.kind} (${scoped.ref.apiVersion}) is cluster-scoped: a Loop reaches only namespaced kinds in its own namespace; a cluster-scoped kind needs a ClusterLoop`,
  };
}

/** Why a namespaced Loop may not read objects there (a function's `requires`), or undefined; checked before the read. */
export function readConfinementProblem(own: string, namespace: string | undefined, namespaced: boolean): string | undefined {
  if (!namespaced) return `the kind is cluster-scoped, and a Loop reads only in its own namespace (${own})`;
  if (namespace !== own) return `${namespace ?? '(no namespace)'} is not the Loop's namespace: a Loop reads only in its own namespace (${own})`;
  return undefined;
}

/** Why a namespaced Loop may not write this target, or undefined; checked before any API call is made for it. */
export function writeConfinementProblem(own: string, target: { namespace?: string | undefined }, namespaced: boolean): string | undefined {
  if (!namespaced) return `the kind is cluster-scoped, and a Loop writes only in its own namespace (${own})`;
  if (target.namespace !== own) return `${target.namespace ?? '(no namespace)'} is not the Loop's namespace: a Loop writes only in its own namespace (${own})`;
  return undefined;
}
