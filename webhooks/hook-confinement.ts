// What confines a namespaced AdmissionHook to its own namespace (docs/tenants.md): it sees only namespaced
// requests of that namespace, reads context there, runs as one of its ServiceAccounts and calls a function
// Service and signing Secret there. Pure: problems come back as InvalidSpec messages; the spec comes back
// with every omitted namespace filled in as the hook's own.
import type { AdmissionHookSpec } from '../api/admission-hook.ts';

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
  const service = spec.function?.service;
  if (service && !isOwn(service.namespace, namespace)) elsewhere('function.service', service.namespace);
  const secret = spec.function?.signingSecretRef;
  if (secret && !isOwn(secret.namespace, namespace)) elsewhere('function.signingSecretRef', secret.namespace);
  for (const entry of spec.context ?? []) {
    if (entry.namespace !== undefined && entry.namespace !== 'Same' && entry.namespace !== namespace) elsewhere(`context "${entry.name}"`, entry.namespace);
  }
  return problems;
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
        ...fn,
        ...(fn.service ? { service: { ...fn.service, namespace } } : {}),
        ...(fn.signingSecretRef ? { signingSecretRef: { ...fn.signingSecretRef, namespace } } : {}),
      },
      // Context is read in the hook's namespace only, whatever the request (which is of that namespace anyway).
      ...(spec.context ? { context: spec.context.map((entry) => ({ ...entry, namespace })) } : {}),
    },
  };
}
