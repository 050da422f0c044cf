// The injector's decisions around planInjection: which requests it leaves alone, the Watcher the gateway
// sent as context (missing, unusable, odd), and the missing-Watcher policy. Replays over HTTP: test/http.
import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.ts';
import type { AdmissionRequest } from '../../lib/sdk/index.ts';
import { admitWatcherSidecar } from './admit.ts';

/** The recorded request of a ReplicaSet pod naming Watcher logwatch, with the context swapped. */
function request(context: Record<string, KubeObject | null>, change: (pod: V1Pod) => void = () => {}): AdmissionRequest {
  const fixture = JSON.parse(readFileSync(new URL('../../test/fixtures/watcher-sidecar/injects-into-replicaset-pod.json', import.meta.url), 'utf8')) as { request: AdmissionRequest };
  change(fixture.request.object as V1Pod);
  return { ...fixture.request, context };
}

const watcher = (spec: unknown): KubeObject => ({ apiVersion: 'watch.kubeloop.dev/v1alpha1', kind: 'Watcher', metadata: { name: 'logwatch', namespace: 'shop' }, spec });
const allowMissing = { missingWatcher: 'allow' } as const;

describe('admitWatcherSidecar', () => {
  it('injects with a patch for a pod whose Watcher the gateway sent', () => {
    const response = admitWatcherSidecar(request({ watcher: watcher({ container: { name: 'logwatch', image: 'busybox:1.36' } }) }), allowMissing);
    expect(response.allowed).toBe(true);
    expect(response.patch?.some((op) => op.path === '/spec/containers/-')).toBe(true);
  });

  it('admits a pod naming a missing Watcher with a warning, or denies it with missingWatcher deny', () => {
    expect(admitWatcherSidecar(request({ watcher: null }), allowMissing)).toEqual({
      apiVersion: 'kubeloop.dev/v1',
      kind: 'AdmissionResponse',
      allowed: true,
      warnings: ['Watcher "logwatch" not found in namespace "shop"; pod admitted without the sidecar'],
    });
    expect(admitWatcherSidecar(request({ watcher: null }), { missingWatcher: 'deny' })).toMatchObject({
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'Watcher "logwatch" not found in namespace "shop"' },
    });
  });

  it('admits unchanged with a warning when the Watcher has a shape injection cannot use', () => {
    const response = admitWatcherSidecar(request({ watcher: watcher({ container: { name: 'odd', image: 'busybox', volumeMounts: { not: 'a list' } } }) }), allowMissing);
    expect(response.patch).toBeUndefined();
    expect(response.warnings?.[0]).toMatch(/^Watcher "logwatch" could not be injected \(.+\); pod admitted without the sidecar$/);
  });

  it('says how to fix a hook that sends no watcher context instead of silently injecting nothing', () => {
    const response = admitWatcherSidecar(request({}), allowMissing);
    expect(response.allowed).toBe(true);
    expect(response.patch).toBeUndefined();
    expect(response.warnings?.[0]).toContain('sends no "watcher" context object');
  });

  it('leaves a pod whose annotation is blank alone, even under missingWatcher deny', () => {
    const response = admitWatcherSidecar(request({ watcher: null }, (pod) => (pod.metadata!.annotations!['watch.kubeloop.dev/watcher'] = ' ')), { missingWatcher: 'deny' });
    expect(response).toEqual({ apiVersion: 'kubeloop.dev/v1', kind: 'AdmissionResponse', allowed: true });
  });
});
