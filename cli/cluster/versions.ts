// Pinned versions of the control-plane binaries and where they are cached, keyed by version.
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Newest patches the Go module proxy serves (checked 2026-11: k8s.io/kubernetes v1.35.7, .9 and .10 are
 * not on the proxy, v1.35.8 is; see docs/control-plane.md).
 */
export const VERSIONS = {
  kubernetes: 'v1.35.8',
  etcd: 'v3.6.16',
  kwok: 'v0.8.0',
  helm: 'v3.21.4',
} as const;

export type Component = keyof typeof VERSIONS;

export const BINARY_COMPONENT = {
  kubeApiserver: { file: 'kube-apiserver', component: 'kubernetes' },
  kubeControllerManager: { file: 'kube-controller-manager', component: 'kubernetes' },
  kubeScheduler: { file: 'kube-scheduler', component: 'kubernetes' },
  kubectl: { file: 'kubectl', component: 'kubernetes' },
  etcd: { file: 'etcd', component: 'etcd' },
  kwok: { file: 'kwok', component: 'kwok' },
  helm: { file: 'helm', component: 'helm' },
} as const satisfies Record<string, { file: string; component: Component }>;

export type BinaryKey = keyof typeof BINARY_COMPONENT;

/** Root of everything kubeloop caches outside the repository (binaries, Go wrapper modules). */
export function cacheRoot(): string {
  const fromEnv = process.env.KUBELOOP_CACHE_DIR;
  if (fromEnv) return fromEnv;
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg && xdg.length > 0 ? xdg : join(homedir(), '.cache'), 'kubeloop');
}

/** Directory holding one component's binaries, e.g. ~/.cache/kubeloop/bin/kubernetes-v1.35.8. */
export function componentBinDir(component: Component): string {
  return join(cacheRoot(), 'bin', `${component}-${VERSIONS[component]}`);
}

/** Directory of the generated Go wrapper module used to build a component. */
export function componentSrcDir(component: Component): string {
  return join(cacheRoot(), 'src', `${component}-${VERSIONS[component]}`);
}
