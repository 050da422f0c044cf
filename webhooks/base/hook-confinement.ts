// What confines a namespaced AdmissionHook to its own namespace (docs/tenants.md): it sees only namespaced
// requests of that namespace, reads context there, runs as one of its ServiceAccounts and calls function
// Services (live, shadow, canary) with signing Secrets there. Pure: problems come back as InvalidSpec messages; the spec comes back
// with every omitted namespace filled in as the hook's own.
import type { AdmissionHookSpec, HookFunctionVersion } from '../../api/admission-hook.ts';

export type Confinement = { ok: true; spec: AdmissionHookSpec } | { ok: false; message: string };

/** "Same", absent or the own namespace are the own namespace; anything else reaches elsewhere. */
const isOwn = (value: string | undefined, namespace: string): boolean => value === undefined || value === '' || value === namespace;

function problemsOf(spec: AdmissionHookSpec, namespace: string): string[] {
  const problems: string[] = [];
  const elsewhere = (field: string, value: string) =>
    problems.push(`${field}: namespace "${value}" is not the hook's own (${namespace}); an AdmissionHook reaches only its own namespace (a ClusterAdmissionHook reaches others)`);
  (Array.isArray(spec.rules) ? spec.rules : []).forEach((rule, i) => {
    if (rule.scope !== undefined && rule.scope !== 'Namespaced') {
      problems.push(`rules[${i}].scope: "${rule.scope}" would send cluster-scoped requests; an AdmissionHook sees only namespaced objects of ${namespace} (omit scope or say Namespaced)`);
    }
  });
  if (spec.namespaceSelector !== undefined) {
    problems.push(`namespaceSelector: an AdmissionHook sees only its own namespace (${namespace}); remove the selector (use objectSelector or matchConditions to narrow what it sees)`);
  }
  const account = spec.serviceAccount;
  if (account && !isOwn(account.namespace, namespace)) elsewhere('serviceAccount', account.namespace);
  // The live function and its shadow and canary (docs/safe-changes.md): each calls a Service and signs with a Secret.
  const fn = spec.function;
  for (const [field, version] of [['function', fn], ['function.shadow', fn?.shadow], ['function.canary', fn?.canary]] as const) {
    if (version?.service && !isOwn(version.service.namespace, namespace)) elsewhere(`${field}.service`, version.service.namespace);
    if (version?.signingSecretRef && !isOwn(version.signingSecretRef.namespace, namespace)) elsewhere(`${field}.signingSecretRef`, version.signingSecretRef.namespace);
  }
  for (const other of fn?.canary?.namespaces ?? []) if (other !== namespace) elsewhere('function.canary.namespaces', other);
  for (const entry of spec.context ?? []) {
    if (entry.namespace !== undefined && entry.namespace !== 'Same' && entry.namespace !== namespace) elsewhere(`context "${entry.name}"`, entry.namespace);
  }
  return problems;
}

/** A function version with its Service's and signing Secret's namespaces made the hook's own. */
function inNamespace<V extends HookFunctionVersion>(version: V, namespace: string): V {
  return {
    ...version,
    ...(version.service ? { service: { ...version.service, namespace } } : {}),
    ...(version.signingSecretRef ? { signingSecretRef: { ...version.signingSecretRef, namespace } } : {}),
  };
}

/** The spec of the AdmissionHook in `namespace` with its namespaces made explicit, or why it reaches elsewhere. */
export function confineToNamespace(spec: AdmissionHookSpec, namespace: string): Confinement {
  const problems = problemsOf(spec, namespace);
  if (problems.length > 0) return { ok: false, message: problems.join('; ') };
  const fn = spec.function ?? {};
  return {
    ok: true,
    spec: {
      ...spec,
      rules: Array.isArray(spec.rules) ? spec.rules.map((rule) => ({ ...rule, scope: 'Namespaced' })) : spec.rules,
      ...(spec.serviceAccount ? { serviceAccount: { ...spec.serviceAccount, namespace } } : {}),
      function: {
        ...inNamespace(fn, namespace),
        ...(fn.shadow ? { shadow: inNamespace(fn.shadow, namespace) } : {}),
        ...(fn.canary ? { canary: inNamespace(fn.canary, namespace) } : {}),
      },
      // Context is read in the hook's namespace only, whatever the request (which is of that namespace anyway).
      ...(spec.context ? { context: spec.context.map((entry) => ({ ...entry, namespace })) } : {}),
    },
  };
}
