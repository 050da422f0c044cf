// The functions this repository ships, by name, loaded lazily so serving one does not load the others.
import type { FunctionDefinition } from '../lib/sdk/define-function.ts';

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
