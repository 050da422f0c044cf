// Pure injection logic: the JSON patch that adds a Watcher's sidecar, volume, ConfigMap envFrom,
// image pull secrets and the "injected" annotation to a pod. Operations are built directly from the
// few paths we touch instead of diffing whole pods (cheap on large pods), and never use metadata.name:
// pods created through generateName have none at admission.
import type { V1Container, V1EnvFromSource, V1LocalObjectReference, V1Pod, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { jsonEqual, pointerEscape } from '../../lib/kube/object-meta.ts';
import { INJECTED_ANNOTATION, WATCHER_ANNOTATION, configMapNameOf, imagePullSecretsOf } from '../../api/watcher.ts';
import type { InjectableWatcher as Watcher } from './watcher.ts';

export type PatchOperation = { op: 'add'; path: string; value: unknown };

export type InjectionPlan =
  | { action: 'skip'; reason: 'not-annotated' | 'already-injected' | 'sidecar-present' | 'no-containers'; warnings: string[] }
  | { action: 'inject'; patch: PatchOperation[]; warnings: string[]; sidecarName: string };


/** The Watcher a pod asks for, or undefined when it did not opt in. */
export function requestedWatcher(pod: V1Pod): string | undefined {
  const name = pod.metadata?.annotations?.[WATCHER_ANNOTATION]?.trim();
  return name ? name : undefined;
}

const DNS_LABEL_MAX = 63;

/** First of `base`, `base-1`, `base-2`... not in `taken`, kept within a DNS label's 63 characters. */
export function freeName(base: string, taken: ReadonlySet<string>): string {
  if (!taken.has(base)) return base;
  for (let i = 1; ; i++) {
    const suffix = `-${i}`;
    const candidate = `${base.slice(0, DNS_LABEL_MAX - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

function appendOps(path: string, existing: unknown[] | undefined, items: unknown[]): PatchOperation[] {
  if (items.length === 0) return [];
  if (!existing) return [{ op: 'add', path, value: items }];
  return items.map((value) => ({ op: 'add', path: `${path}/-`, value }));
}

interface VolumeDecision {
  volume: V1Volume | undefined;
  renamedFrom?: string;
}

function decideVolume(pod: V1Pod, watcher: Watcher, warnings: string[]): VolumeDecision {
  const wanted = watcher.spec.volume;
  if (!wanted?.name) return { volume: undefined };
  const existing = pod.spec?.volumes ?? [];
  const same = existing.find((v) => v.name === wanted.name);
  if (!same) return { volume: wanted };
  // The pod already declares exactly this volume: share it rather than add a duplicate.
  if (jsonEqual(same, wanted)) return { volume: undefined };
  const name = freeName(wanted.name, new Set(existing.map((v) => v.name)));
  warnings.push(`volume "${wanted.name}" already exists in the pod with a different source; the Watcher's volume was added as "${name}"`);
  return { volume: { ...wanted, name }, renamedFrom: wanted.name };
}

function sidecarMounts(container: V1Container, volumes: ReadonlySet<string>, volume: VolumeDecision, warnings: string[]): V1VolumeMount[] | undefined {
  if (!container.volumeMounts) return undefined;
  const mounts: V1VolumeMount[] = [];
  for (const mount of container.volumeMounts) {
    const name = volume.renamedFrom === mount.name && volume.volume ? volume.volume.name : mount.name;
    // A mount of a volume the pod does not have would make the API server reject the whole pod.
    if (!volumes.has(name)) {
      warnings.push(`sidecar volumeMount "${mount.name}" names a volume neither the pod nor the Watcher defines; mount dropped`);
      continue;
    }
    mounts.push({ ...mount, name });
  }
  return mounts;
}

/** Where the ServiceAccount admission plugin mounts the API token into every container. */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The ServiceAccount plugin ran before us and mounted the token into the pod's containers; after our
 * patch it would run again and mount it into the sidecar too, which changes the pod and makes the API
 * server call this webhook a second time (reinvocationPolicy IfNeeded). Adding the same mount ourselves
 * gives the identical pod with one call. Pods without the mount (automount off) get none.
 */
function serviceAccountMount(containers: V1Container[], sidecarMounts: V1VolumeMount[] | undefined): V1VolumeMount | undefined {
  if (sidecarMounts?.some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH)) return undefined;
  for (const container of containers) {
    const mount = container.volumeMounts?.find((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH);
    if (mount) return { ...mount };
  }
  return undefined;
}

function withEnvFrom(container: V1Container, configMapName: string): V1EnvFromSource[] {
  const envFrom = [...(container.envFrom ?? [])];
  if (!envFrom.some((source) => source.configMapRef?.name === configMapName)) {
    // optional: the Watcher reconcile may not have created the ConfigMap yet; the pod must still start.
    envFrom.push({ configMapRef: { name: configMapName, optional: true } });
  }
  return envFrom;
}

/** Plans the mutation of `pod` for `watcher`. The caller has already found the Watcher the pod names. */
export function planInjection(pod: V1Pod, watcher: Watcher): InjectionPlan {
  const watcherName = watcher.metadata.name ?? '';
  const annotations = pod.metadata?.annotations;
  if (!requestedWatcher(pod)) return { action: 'skip', reason: 'not-annotated', warnings: [] };
  if (annotations?.[INJECTED_ANNOTATION] !== undefined) return { action: 'skip', reason: 'already-injected', warnings: [] };
  const containers = pod.spec?.containers ?? [];
  if (containers.length === 0) return { action: 'skip', reason: 'no-containers', warnings: [] };

  const template = watcher.spec.container;
  const baseName = template.name || `${watcherName}-watcher`;
  if (containers.some((c) => c.name === baseName && c.image === template.image)) {
    return { action: 'skip', reason: 'sidecar-present', warnings: [] };
  }

  const warnings: string[] = [];
  const spec = pod.spec ?? { containers };
  const containerNames = new Set(
    [...containers, ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].map((c) => c.name),
  );
  const sidecarName = freeName(baseName, containerNames);
  if (sidecarName !== baseName) {
    warnings.push(`container name "${baseName}" is already used in the pod; the Watcher sidecar was added as "${sidecarName}"`);
  }

  const volume = decideVolume(pod, watcher, warnings);
  const volumeNames = new Set([...(spec.volumes ?? []).map((v) => v.name), ...(volume.volume ? [volume.volume.name] : [])]);
  const sidecar: V1Container = { ...template, name: sidecarName, envFrom: withEnvFrom(template, configMapNameOf(watcher)) };
  const mounts = sidecarMounts(template, volumeNames, volume, warnings);
  const tokenMount = serviceAccountMount(containers, mounts);
  if (mounts || tokenMount) sidecar.volumeMounts = [...(mounts ?? []), ...(tokenMount ? [tokenMount] : [])];

  const haveSecrets = new Set((spec.imagePullSecrets ?? []).map((s) => s.name));
  const newSecrets: V1LocalObjectReference[] = imagePullSecretsOf(watcher).filter((s) => !haveSecrets.has(s.name));

  const patch: PatchOperation[] = [
    ...appendOps('/spec/volumes', spec.volumes, volume.volume ? [volume.volume] : []),
    { op: 'add', path: '/spec/containers/-', value: sidecar },
    ...appendOps('/spec/imagePullSecrets', spec.imagePullSecrets, newSecrets),
    // The opt-in annotation guarantees metadata.annotations exists.
    { op: 'add', path: `/metadata/annotations/${pointerEscape(INJECTED_ANNOTATION)}`, value: watcherName },
  ];
  return { action: 'inject', patch, warnings, sidecarName };
}
