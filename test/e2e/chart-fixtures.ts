// What the charts/kubeloop suites render and check against: the functions the chart runs, the value sets every
// rendering is tried with, and readers of the rendered Loops and RBAC, for the chart suites (test/e2e/chart*.test.ts).
import type { Manifest } from './chart-render.ts';

/** The seed functions the chart runs by default: a Loop each. */
export const FUNCTIONS = ['at', 'pod-name-label', 'podset', 'watcher'] as const;
/** Admission functions: an AdmissionHook each instead of a Loop. */
export const ADMISSION_FUNCTIONS = ['watcher-sidecar'] as const;
export const RELEASE = 'kubeloop';

/** Value sets every rendering test runs with. */
export const VALUE_SETS: Record<string, Record<string, unknown>> = {
  defaults: {},
  knative: { functionDefaults: { runtime: 'knative' } },
  'cert-manager': { webhook: { certificates: { mode: 'cert-manager' } }, router: { historyApi: { enabled: true }, history: { files: { enabled: true } } } },
  'mixed runtimes, namespaced loops': {
    functions: {
      // Namespaces that exist in any cluster: a Loop's RoleBindings are created in them.
      podset: { runtime: 'knative', loop: { namespaces: ['default', 'kube-public'] } },
      watcher: { enabled: false },
    },
  },
  minimal: {
    router: { replicas: 1, leaderElection: { enabled: false } },
    webhook: { enabled: false },
    networkPolicy: { enabled: false },
    functions: { podset: { enabled: false }, watcher: { enabled: false }, at: { enabled: false } },
  },
};

export interface LoopManifest extends Manifest {
  spec: {
    for: { apiVersion: string; kind: string };
    owns?: Array<{ apiVersion: string; kind: string }>;
    namespaces?: string[];
    function: { url: string; signingSecretRef?: { name: string; namespace: string; key: string } };
    serviceAccount?: { namespace: string; name: string };
  };
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

export function rulesOf(manifest: Manifest): PolicyRule[] {
  return (manifest as unknown as { rules?: PolicyRule[] }).rules ?? [];
}

export function subjectsOf(manifest: Manifest): Array<{ kind: string; name: string; namespace?: string }> {
  return (manifest as unknown as { subjects?: Array<{ kind: string; name: string; namespace?: string }> }).subjects ?? [];
}

export function plural(kind: string): string {
  const lower = kind.toLowerCase();
  return /(s|x|ch|sh)$/.test(lower) ? `${lower}es` : `${lower}s`;
}

export function group(apiVersion: string): string {
  return apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
}
