import { describe, expect, it } from 'vitest';
import fastJsonPatch from 'fast-json-patch';
import { validateReconcileResponse } from '../../lib/contract/validate.ts';
import type { KubeObject, PatchAction, ReconcileResponse } from '../../lib/sdk/index.ts';
import { kubeObject, requestFor, variant } from '../../test/support/reconcile-request.ts';
import { configDataProblem, reconcileWatcher } from './reconcile.ts';
import type { Watcher } from '../../api/watcher.ts';

const watcher = kubeObject<Watcher>({
  apiVersion: 'watch.kubeloop.dev/v1alpha1',
  kind: 'Watcher',
  metadata: {
    name: 'log-watcher',
    namespace: 'shop',
    uid: 'c0ffee00-1111-4222-8333-444455556666',
    resourceVersion: '3000',
    generation: 1,
    creationTimestamp: '2026-11-22T09:00:00Z',
  },
  spec: {
    container: { name: 'watcher', image: 'busybox:1.36', command: ['sh', '-c', 'tail -F /var/log/app.log'] },
    configData: { LOG_LEVEL: 'info', 'app.properties': 'alert.on=ERROR\n' },
    configBinaryData: { 'logo.png': 'iVBORw0KGgo=' },
  },
});

const ownerRef = {
  apiVersion: 'watch.kubeloop.dev/v1alpha1',
  kind: 'Watcher',
  name: 'log-watcher',
  uid: 'c0ffee00-1111-4222-8333-444455556666',
  controller: true,
  blockOwnerDeletion: true,
};

const configMap = kubeObject({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'log-watcher-config',
    namespace: 'shop',
    uid: 'cm-uid',
    resourceVersion: '3001',
    creationTimestamp: '2026-11-22T09:00:01Z',
    ownerReferences: [ownerRef],
  },
  data: { LOG_LEVEL: 'info', 'app.properties': 'alert.on=ERROR\n' },
  binaryData: { 'logo.png': 'iVBORw0KGgo=' },
});

const named = (object: Watcher) => variant(object, (w) => (w.status = { configMapName: 'log-watcher-config', observedGeneration: 1 }));

function reconcile(object: Watcher, configMaps: KubeObject[] | undefined): ReconcileResponse {
  const children: Record<string, KubeObject[]> = configMaps === undefined ? {} : { 'ConfigMap.v1': configMaps };
  const response = reconcileWatcher(requestFor(object, { children, loop: 'watcher' }));
  const valid = validateReconcileResponse(response);
  expect(valid.ok ? [] : valid.errors).toEqual([]);
  return response;
}

describe('watcher reconcile', () => {
  it('creates the <watcher>-config ConfigMap, controller-owned, and names it in status', () => {
    expect(reconcile(watcher, []).actions).toEqual([
      {
        op: 'create',
        object: {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'log-watcher-config', namespace: 'shop', ownerReferences: [ownerRef] },
          data: { LOG_LEVEL: 'info', 'app.properties': 'alert.on=ERROR\n' },
          binaryData: { 'logo.png': 'iVBORw0KGgo=' },
        },
      },
      { op: 'status', status: { configMapName: 'log-watcher-config' } },
    ]);
  });

  it('creates a ConfigMap without data fields when the Watcher has no config data', () => {
    const bare = variant(watcher, (w) => {
      delete w.spec!.configData;
      delete w.spec!.configBinaryData;
    });
    const [created] = reconcile(bare, []).actions;
    expect(created).toEqual({
      op: 'create',
      object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'log-watcher-config', namespace: 'shop', ownerReferences: [ownerRef] } },
    });
  });

  it('leaves a ConfigMap with the right data alone and writes no unchanged status', () => {
    expect(reconcile(named(watcher), [configMap]).actions).toEqual([]);
  });

  it('corrects drifted data with a patch guarded by resourceVersion', () => {
    const drifted = variant(configMap, (cm) => {
      (cm as { data: Record<string, string> }).data.LOG_LEVEL = 'debug';
      (cm as { data: Record<string, string> }).data.EXTRA = 'added by hand';
    });
    const [action] = reconcile(named(watcher), [drifted]).actions as PatchAction[];
    expect(action?.target).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'log-watcher-config' });
    expect(action?.patch[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '3001' });
    const fixed = fastJsonPatch.applyPatch(structuredClone(drifted), action!.patch, true).newDocument;
    expect(fixed).toEqual(configMap);
  });

  it('follows an edit of configData and drops binaryData removed from the spec', () => {
    const edited = variant(named(watcher), (w) => {
      w.spec!.configData = { LOG_LEVEL: 'warn' };
      delete w.spec!.configBinaryData;
    });
    const [action] = reconcile(edited, [configMap]).actions as PatchAction[];
    const result = fastJsonPatch.applyPatch(structuredClone(configMap), action!.patch, true).newDocument as KubeObject;
    expect(result.data).toEqual({ LOG_LEVEL: 'warn' });
    expect(result.binaryData).toBeUndefined();
  });

  it('sets status.configMapName when it is missing even if the ConfigMap is right', () => {
    expect(reconcile(watcher, [configMap]).actions).toEqual([{ op: 'status', status: { configMapName: 'log-watcher-config' } }]);
  });

  it('writes the unchanged status again after a spec edit, so observedGeneration catches up', () => {
    const edited = variant(named(watcher), (w) => (w.metadata!.generation = 2));
    expect(reconcile(edited, [configMap]).actions).toEqual([{ op: 'status', status: { configMapName: 'log-watcher-config' } }]);
  });

  it('does not treat a ConfigMap controlled by someone else as its own', () => {
    const foreign = variant(configMap, (cm) => (cm.metadata!.ownerReferences = [{ ...ownerRef, uid: 'other' }]));
    expect(reconcile(named(watcher), [foreign]).actions.map((a) => a.op)).toEqual(['create']);
  });

  it('does nothing for a Watcher that is being deleted', () => {
    const deleting = variant(watcher, (w) => (w.metadata!.deletionTimestamp = new Date('2026-11-22T10:00:00Z')));
    expect(reconcile(deleting, [configMap]).actions).toEqual([]);
  });

  it('refuses to act without the ConfigMap.v1 children', () => {
    expect(reconcile(watcher, undefined).error).toEqual({
      type: 'permanent',
      message: 'the request has no children["ConfigMap.v1"]: the Watcher Loop must own v1 ConfigMaps',
    });
  });

  it('answers config keys the API server would refuse with a Warning event and a permanent error', () => {
    const bad = variant(watcher, (w) => (w.spec!.configData = { 'not/allowed': 'x' }));
    const response = reconcile(bad, []);
    const message = 'spec.configData key "not/allowed" is not a valid ConfigMap key (letters, digits, \'-\', \'_\', \'.\')';
    expect(response.actions).toEqual([{ op: 'event', type: 'Warning', reason: 'InvalidConfigData', message }]);
    expect(response.error).toEqual({ type: 'permanent', message });
  });

  it('answers a Watcher name too long for its ConfigMap name with a permanent error', () => {
    const long = variant(watcher, (w) => (w.metadata!.name = 'w'.repeat(250)));
    const response = reconcile(long, []);
    expect(response.error?.message).toMatch(/would exceed 253 characters/);
    expect(response.actions.map((a) => a.op)).toEqual(['event']);
  });
});

describe('configDataProblem', () => {
  it('accepts valid keys and rejects a key present in both maps', () => {
    expect(configDataProblem({ a: '1', 'b.c': '2' }, { d: 'AA==' })).toBeUndefined();
    expect(configDataProblem({ a: '1' }, { a: 'AA==' })).toBe('key "a" is in both spec.configData and spec.configBinaryData');
    expect(configDataProblem({}, { 'bad key': 'AA==' })).toMatch(/spec.configBinaryData key "bad key"/);
  });
});
