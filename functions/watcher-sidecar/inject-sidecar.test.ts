// Injection rules, checked by applying the planned JSON patch to the pod with fast-json-patch.
import type { V1LocalObjectReference, V1Pod } from '@kubernetes/client-node';
import jsonpatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import { freeName, planInjection, type InjectionPlan } from './inject-sidecar.ts';
import type { InjectableWatcher as Watcher } from './watcher.ts';

const watcher: Watcher = {
  apiVersion: 'watch.kubeloop.dev/v1alpha1',
  kind: 'Watcher',
  metadata: { name: 'logwatch', namespace: 'shop' },
  spec: {
    container: { name: 'logwatch', image: 'busybox:1.36', args: ['tail'], volumeMounts: [{ name: 'watch-data', mountPath: '/data' }] },
    volume: { name: 'watch-data', emptyDir: {} },
    imagePullSecrets: { name: 'registry-creds' },
  },
  status: { configMapName: 'logwatch-config' },
};

function pod(overrides: Partial<V1Pod['spec']> = {}, annotations: Record<string, string> = { 'watch.kubeloop.dev/watcher': 'logwatch' }): V1Pod {
  // generateName only: ReplicaSet pods have no name at admission.
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'web-7d9f-', namespace: 'shop', annotations },
    spec: { containers: [{ name: 'web', image: 'nginx:1.27' }], ...overrides },
  };
}

function apply(target: V1Pod, plan: InjectionPlan): V1Pod {
  if (plan.action !== 'inject') throw new Error(`expected inject, got ${plan.action}/${plan.reason}`);
  const errors = jsonpatch.validate(plan.patch, target);
  if (errors) throw errors;
  return jsonpatch.applyPatch(structuredClone(target), plan.patch, true, false).newDocument;
}

describe('planInjection', () => {
  it('adds the sidecar with envFrom the Watcher ConfigMap, the volume, the pull secret and the injected annotation', () => {
    const plan = planInjection(pod(), watcher);
    const result = apply(pod(), plan);
    expect(plan.warnings).toEqual([]);
    expect(result.spec?.containers.map((c) => c.name)).toEqual(['web', 'logwatch']);
    expect(result.spec?.containers[1]).toEqual({
      name: 'logwatch',
      image: 'busybox:1.36',
      args: ['tail'],
      volumeMounts: [{ name: 'watch-data', mountPath: '/data' }],
      envFrom: [{ configMapRef: { name: 'logwatch-config', optional: true } }],
    });
    expect(result.spec?.volumes).toEqual([{ name: 'watch-data', emptyDir: {} }]);
    expect(result.spec?.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
    expect(result.metadata?.annotations).toEqual({ 'watch.kubeloop.dev/watcher': 'logwatch', 'watch.kubeloop.dev/injected': 'logwatch' });
    expect(result.metadata?.name).toBeUndefined();
  });

  it('appends to existing volumes and pull secrets instead of replacing them', () => {
    const before = pod({ volumes: [{ name: 'cache', emptyDir: {} }], imagePullSecrets: [{ name: 'mine' }] });
    const result = apply(before, planInjection(before, watcher));
    expect(result.spec?.volumes?.map((v) => v.name)).toEqual(['cache', 'watch-data']);
    expect(result.spec?.imagePullSecrets).toEqual([{ name: 'mine' }, { name: 'registry-creds' }]);
  });

  it('falls back to <watcher>-config before the reconcile has set status.configMapName, and accepts a list of pull secrets', () => {
    const fresh: Watcher = { ...watcher, status: undefined, spec: { ...watcher.spec, imagePullSecrets: [{ name: 'a' }, { name: 'b' }] as unknown as V1LocalObjectReference } };
    const result = apply(pod(), planInjection(pod(), fresh));
    expect(result.spec?.containers[1]?.envFrom).toEqual([{ configMapRef: { name: 'logwatch-config', optional: true } }]);
    expect(result.spec?.imagePullSecrets).toEqual([{ name: 'a' }, { name: 'b' }]);
  });

  it('adds only the container and the annotation for a Watcher without volume or pull secrets', () => {
    const minimal: Watcher = { metadata: { name: 'm' }, spec: { container: { name: 'm', image: 'busybox' } } };
    const plan = planInjection(pod(), minimal);
    expect(plan.action === 'inject' && plan.patch.map((op) => op.path)).toEqual([
      '/spec/containers/-',
      '/metadata/annotations/watch.kubeloop.dev~1injected',
    ]);
  });

  it('keeps an existing pull secret of the same name once', () => {
    const before = pod({ imagePullSecrets: [{ name: 'registry-creds' }] });
    expect(apply(before, planInjection(before, watcher)).spec?.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
  });

  it('renames the sidecar with a suffix when a different container already has its name, and warns', () => {
    const before = pod({ containers: [{ name: 'logwatch', image: 'my/own' }], initContainers: [{ name: 'logwatch-1', image: 'x' }] });
    const plan = planInjection(before, watcher);
    const result = apply(before, plan);
    expect(result.spec?.containers.map((c) => c.name)).toEqual(['logwatch', 'logwatch-2']);
    expect(plan.warnings).toEqual([
      'container name "logwatch" is already used in the pod; the Watcher sidecar was added as "logwatch-2"',
    ]);
  });

  it('renames a clashing volume and points the sidecar mount at the renamed volume', () => {
    const before = pod({ volumes: [{ name: 'watch-data', configMap: { name: 'app' } }] });
    const plan = planInjection(before, watcher);
    const result = apply(before, plan);
    expect(result.spec?.volumes).toEqual([
      { name: 'watch-data', configMap: { name: 'app' } },
      { name: 'watch-data-1', emptyDir: {} },
    ]);
    expect(result.spec?.containers[1]?.volumeMounts).toEqual([{ name: 'watch-data-1', mountPath: '/data' }]);
    expect(plan.warnings).toHaveLength(1);
    expect(plan.warnings[0]).toContain('"watch-data-1"');
  });

  it('shares an identical volume the pod already declares', () => {
    const before = pod({ volumes: [{ name: 'watch-data', emptyDir: {} }] });
    const plan = planInjection(before, watcher);
    expect(apply(before, plan).spec?.volumes).toEqual([{ name: 'watch-data', emptyDir: {} }]);
    expect(plan.warnings).toEqual([]);
  });

  it('drops a sidecar mount of a volume nobody defines, so the pod is still valid, and warns', () => {
    const noVolume: Watcher = { ...watcher, spec: { ...watcher.spec, volume: undefined } };
    const plan = planInjection(pod(), noVolume);
    expect(apply(pod(), plan).spec?.containers[1]?.volumeMounts).toEqual([]);
    expect(plan.warnings[0]).toContain('volumeMount "watch-data"');
  });

  it('is idempotent: a pod with the injected annotation or the sidecar is left alone', () => {
    const once = apply(pod(), planInjection(pod(), watcher));
    expect(planInjection(once, watcher)).toEqual({ action: 'skip', reason: 'already-injected', warnings: [] });
    const sidecarOnly = pod({ containers: [{ name: 'web', image: 'nginx' }, { name: 'logwatch', image: 'busybox:1.36' }] });
    expect(planInjection(sidecarOnly, watcher)).toMatchObject({ action: 'skip', reason: 'sidecar-present' });
  });

  it('skips pods that did not opt in or have no containers', () => {
    expect(planInjection(pod({}, {}), watcher)).toMatchObject({ action: 'skip', reason: 'not-annotated' });
    expect(planInjection(pod({ containers: [] }), watcher)).toMatchObject({ action: 'skip', reason: 'no-containers' });
  });

  it('escapes "/" in the annotation key of the JSON pointer', () => {
    const plan = planInjection(pod(), watcher);
    expect(plan.action === 'inject' && plan.patch.at(-1)?.path).toBe('/metadata/annotations/watch.kubeloop.dev~1injected');
  });
});

describe('service account token mount', () => {
  const tokenMount = { name: 'kube-api-access-x7k2p', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true };

  it('gives the sidecar the token mount the ServiceAccount plugin gave the other containers, so it does not re-run us', () => {
    const before = pod({ containers: [{ name: 'web', image: 'nginx', volumeMounts: [tokenMount] }], volumes: [{ name: 'kube-api-access-x7k2p', projected: { sources: [] } }] });
    const result = apply(before, planInjection(before, watcher));
    expect(result.spec?.containers[1]?.volumeMounts).toEqual([{ name: 'watch-data', mountPath: '/data' }, tokenMount]);
  });

  it('adds no token mount when the pod has none (automountServiceAccountToken: false) or the sidecar has its own', () => {
    expect(apply(pod(), planInjection(pod(), watcher)).spec?.containers[1]?.volumeMounts).toEqual([{ name: 'watch-data', mountPath: '/data' }]);
    const own: Watcher = { ...watcher, spec: { ...watcher.spec, container: { name: 'logwatch', image: 'busybox', volumeMounts: [{ name: 'watch-data', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] } } };
    const before = pod({ containers: [{ name: 'web', image: 'nginx', volumeMounts: [tokenMount] }] });
    expect(apply(before, planInjection(before, own)).spec?.containers[1]?.volumeMounts).toEqual([{ name: 'watch-data', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  });
});

describe('freeName', () => {
  it('keeps names within 63 characters when adding a suffix', () => {
    const long = 'x'.repeat(63);
    const name = freeName(long, new Set([long]));
    expect(name).toHaveLength(63);
    expect(name.endsWith('-1')).toBe(true);
  });
});
