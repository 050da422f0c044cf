// Pinned versions of the control-plane binaries and where they are cached, keyed by version.
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Kubernetes releases the local control plane can run: `current` (the newest the Go module proxy serves,
 * checked 2026-11: v1.37.2) and `oldest`, the oldest API server kubeloop supports (v1.35.8; v1.35.7, .9
 * and .10 are not on the proxy). See docs/control-plane.md.
 */
export const KUBERNETES_RELEASES = { current: 'v1.37.2', oldest: 'v1.35.8' } as const;

/**
 * The Kubernetes version this process runs: KUBELOOP_KUBERNETES_VERSION (e.g. the oldest supported one,
 * for the compatibility e2e) or the current release. Each version has its own cache directory.
 */
export function kubernetesVersion(): string {
  const fromEnv = process.env.KUBELOOP_KUBERNETES_VERSION;
  if (fromEnv === undefined || fromEnv === '') return KUBERNETES_RELEASES.current;
  if (!/^v1\.\d+\.\d+$/.test(fromEnv)) throw new Error(`KUBELOOP_KUBERNETES_VERSION must look like v1.37.2, got ${JSON.stringify(fromEnv)}`);
  return fromEnv;
}

/** Minor version of a `v1.X.Y` Kubernetes version. */
export function kubernetesMinor(version: string): number {
  return Number(/^v1\.(\d+)\./.exec(version)?.[1] ?? 0);
}

/**
 * Alpha features the local API server runs with, by the version that has them (an unknown gate stops
 * kube-apiserver from starting): ShardedListAndWatch (1.36+, KEP-5866) for sharded routers.
 */
export function apiserverFeatureGates(version: string): string[] {
  return hasShardedListAndWatch(version) ? ['ShardedListAndWatch=true'] : [];
}

/**
 * kube-apiserver flags a version needs beyond the common ones: its alpha feature gates, and from 1.37
 * no endpoint reconciler (1.37 refuses to advertise a loopback address into the `kubernetes` Service's
 * endpoints, "may not be in the loopback range"; nothing local reaches the API server through that Service).
 */
export function apiserverVersionArgs(version: string): string[] {
  const gates = apiserverFeatureGates(version);
  return [...(gates.length > 0 ? [`--feature-gates=${gates.join(',')}`] : []), ...(kubernetesMinor(version) >= 37 ? ['--endpoint-reconciler-type=none'] : [])];
}

/** Whether the local API server of this version filters sharded lists and watches (1.36+, gate on). */
export function hasShardedListAndWatch(version: string): boolean {
  return kubernetesMinor(version) >= 36;
}

/** Pinned versions of every component; `kubernetes` follows kubernetesVersion(). */
export const VERSIONS = {
  get kubernetes(): string {
    return kubernetesVersion();
  },
  etcd: 'v3.6.16',
  kwok: 'v0.8.0',
  helm: 'v3.21.4',
} as const satisfies Record<string, string>;

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

/** A component's version; Kubernetes' may be asked for (the oldest supported one), else kubernetesVersion(). */
export function componentVersion(component: Component, kubernetes?: string): string {
  return component === 'kubernetes' && kubernetes ? kubernetes : VERSIONS[component];
}

/** Directory holding one component's binaries, e.g. ~/.cache/kubeloop/bin/kubernetes-v1.37.2. */
export function componentBinDir(component: Component, kubernetes?: string): string {
  return join(cacheRoot(), 'bin', `${component}-${componentVersion(component, kubernetes)}`);
}

/** Directory of the generated Go wrapper module used to build a component. */
export function componentSrcDir(component: Component, kubernetes?: string): string {
  return join(cacheRoot(), 'src', `${component}-${componentVersion(component, kubernetes)}`);
}
