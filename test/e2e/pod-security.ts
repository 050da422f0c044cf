// The restricted Pod Security profile plus resource requests and limits, checked on rendered manifests
// (Deployments, Pods, Knative Services) by test/e2e/chart.test.ts.
import { expect } from 'vitest';
import type { Manifest } from './chart-render.ts';

interface SecurityContextLike {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}

interface ContainerLike {
  name?: string;
  securityContext?: SecurityContextLike;
  resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> };
}

export interface PodSpecLike {
  securityContext?: SecurityContextLike;
  containers: ContainerLike[];
  initContainers?: ContainerLike[];
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  volumes?: Array<Record<string, unknown>>;
}

/** The pod specs a manifest would run: a Pod's own, a workload's or a Knative Service's template. */
export function podSpecsOf(manifest: Manifest): PodSpecLike[] {
  const m = manifest as unknown as { kind: string; spec?: { template?: { spec?: PodSpecLike } } & Partial<PodSpecLike> };
  if (m.kind === 'Pod' && m.spec?.containers) return [m.spec as PodSpecLike];
  if (['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'Service'].includes(m.kind) && m.spec?.template?.spec) return [m.spec.template.spec];
  return [];
}

export function assertRestrictedPod(where: string, spec: PodSpecLike): void {
  expect(spec.hostNetwork ?? false, `${where}: hostNetwork`).toBe(false);
  expect(spec.hostPID ?? false, `${where}: hostPID`).toBe(false);
  expect(spec.hostIPC ?? false, `${where}: hostIPC`).toBe(false);
  for (const volume of spec.volumes ?? []) expect(volume, `${where}: no hostPath volumes`).not.toHaveProperty('hostPath');
  for (const container of [...spec.containers, ...(spec.initContainers ?? [])]) {
    const at = `${where} container ${container.name ?? '(unnamed)'}`;
    const sc = container.securityContext ?? {};
    expect(sc.runAsNonRoot ?? spec.securityContext?.runAsNonRoot, `${at}: runAsNonRoot`).toBe(true);
    expect(sc.runAsUser ?? spec.securityContext?.runAsUser ?? 1, `${at}: not uid 0`).not.toBe(0);
    expect(sc.readOnlyRootFilesystem, `${at}: readOnlyRootFilesystem`).toBe(true);
    expect(sc.allowPrivilegeEscalation, `${at}: allowPrivilegeEscalation`).toBe(false);
    expect(sc.privileged ?? false, `${at}: privileged`).toBe(false);
    expect(sc.capabilities?.drop, `${at}: drops ALL capabilities`).toContain('ALL');
    expect(sc.capabilities?.add ?? [], `${at}: adds no capabilities`).toEqual([]);
    expect(sc.seccompProfile?.type ?? spec.securityContext?.seccompProfile?.type, `${at}: seccomp`).toBe('RuntimeDefault');
    for (const kind of ['requests', 'limits'] as const) {
      expect(Object.keys(container.resources?.[kind] ?? {}).sort(), `${at}: resources.${kind}`).toEqual(['cpu', 'memory']);
    }
  }
}
