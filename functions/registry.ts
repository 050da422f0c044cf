// The functions this repository ships, by name, loaded lazily so serving one does not load the others.
import type { FunctionDefinition } from '../lib/sdk/define-function.ts';
import type { AdmissionDefinition } from '../lib/sdk/define-admission.ts';

export const functionRegistry: Record<string, () => Promise<FunctionDefinition>> = {
  at: () => import('./at/index.ts').then((m) => m.default),
  'pod-name-label': () => import('./pod-name-label/index.ts').then((m) => m.default),
  podset: () => import('./podset/index.ts').then((m) => m.default),
  watcher: () => import('./watcher/index.ts').then((m) => m.default),
};

export async function loadFunction(name: string): Promise<FunctionDefinition> {
  const load = functionRegistry[name];
  if (!load) {
    const known = Object.keys(functionRegistry).sort().join(', ') || '(none)';
    throw new Error(`unknown function "${name}"; known: ${known}`);
  }
  return load();
}

/** Admission functions (docs/admission.md), served alike by `kubeloop function <name>`. */
export const admissionRegistry: Record<string, () => Promise<AdmissionDefinition>> = {
  'require-label': () => import('./require-label/index.ts').then((m) => m.default),
  'watcher-sidecar': () => import('./watcher-sidecar/index.ts').then((m) => m.default),
};

/** A reconcile or an admission function by name. */
export async function loadAnyFunction(name: string): Promise<FunctionDefinition | AdmissionDefinition> {
  const admission = admissionRegistry[name];
  if (admission) return admission();
  if (functionRegistry[name]) return loadFunction(name);
  const known = [...Object.keys(functionRegistry), ...Object.keys(admissionRegistry)].sort().join(', ');
  throw new Error(`unknown function "${name}"; known: ${known}`);
}
