import { describe, expect, it } from 'vitest';
import type { RelatedResource } from '../../api/loop.ts';
import type { KubeObject } from '../../lib/contract/types.ts';
import { NAMESPACE_INDEX, namespaceOf, ObjectStore } from '../../lib/kube/object-store.ts';
import { parseLoop } from '../../router/base/loop-spec.ts';
import { diffRequest } from './diff-request.ts';

const ANNOTATION = 'kubeloop.dev/config-map';
const loopWith = (related?: RelatedResource[]) =>
  parseLoop({
    metadata: { name: 'config-reloader' },
    spec: { for: { apiVersion: 'apps/v1', kind: 'Deployment' }, ...(related ? { related } : {}), serviceAccount: { namespace: 'shop', name: 'loop' }, function: { url: 'http://fn.shop.svc/' } },
  });
const configMap = (namespace: string, name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, uid: `u-${namespace}-${name}`, managedFields: [{ manager: 'kubectl' }] },
  data,
});
const deployment: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'shop', uid: 'u-web', annotations: { [ANNOTATION]: 'web-config' } } };

function storeOf(objects: KubeObject[]) {
  const store = new ObjectStore<KubeObject>({ [NAMESPACE_INDEX]: namespaceOf });
  for (const object of objects) store.upsert(object);
  return store;
}

describe('diffRequest', () => {
  it('sends the ConfigMap a Loop relates by annotation under its entry name, as the router does (managedFields dropped)', () => {
    const config = loopWith([{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: ANNOTATION } }]);
    const store = storeOf([configMap('shop', 'web-config', { level: 'warn' }), configMap('shop', 'other', {}), configMap('elsewhere', 'web-config', { level: 'debug' })]);
    const request = diffRequest({ config, owned: [], related: [{ relation: config.related[0]!, store, namespaced: true }] }, deployment, false, new Date('2026-11-26T09:00:00Z'));
    expect(request.related).toEqual({ config: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config', namespace: 'shop', uid: 'u-shop-web-config' }, data: { level: 'warn' } }] });
    expect(request).toMatchObject({ loop: 'config-reloader', trigger: { type: 'RESYNC' }, object: deployment, now: '2026-11-26T09:00:00.000Z' });
  });

  it('sends the entry as [] when the named ConfigMap does not exist, and no related at all for a Loop without spec.related', () => {
    const config = loopWith([{ name: 'config', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: ANNOTATION } }]);
    const now = new Date();
    expect(diffRequest({ config, owned: [], related: [{ relation: config.related[0]!, store: storeOf([]), namespaced: true }] }, deployment, false, now).related).toEqual({ config: [] });
    expect(diffRequest({ config: loopWith(), owned: [], related: [] }, deployment, false, now)).not.toHaveProperty('related');
  });
});
