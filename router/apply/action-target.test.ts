import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { appliedObject, inTargetNamespace } from './action-target.ts';

const primary: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'shop', name: 'web' } };
const configMaps = { apiVersion: 'v1', kind: 'ConfigMap', namespaced: true } as ResourceInfo;
const namespaces = { apiVersion: 'v1', kind: 'Namespace', namespaced: false } as ResourceInfo;

describe('inTargetNamespace', () => {
  it("puts a namespaced object without a namespace in the primary's, and keeps one it names", () => {
    expect(inTargetNamespace({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', labels: { a: 'b' } } }, configMaps, primary).metadata).toEqual({ name: 'web', namespace: 'shop', labels: { a: 'b' } });
    const named: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'other' } };
    expect(inTargetNamespace(named, configMaps, primary)).toBe(named);
  });

  it('leaves a cluster-scoped object without a namespace', () => {
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
    expect(inTargetNamespace(ns, namespaces, primary)).toBe(ns);
  });
});

describe('appliedObject', () => {
  const owned = { ...primary, metadata: { ...primary.metadata, uid: 'uid-web' } };
  it('sends the primary itself as given, in its namespace, never as its own child', () => {
    const applied = appliedObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', labels: { a: 'b' } } }, configMaps, owned);
    expect(applied).toEqual({ isPrimary: true, object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'shop', labels: { a: 'b' } } } });
  });

  it("sends anything else as the primary's child, with its controller reference", () => {
    const applied = appliedObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-config' } }, configMaps, owned);
    expect(applied.isPrimary).toBe(false);
    expect(applied.object.metadata).toMatchObject({ name: 'web-config', namespace: 'shop', ownerReferences: [{ kind: 'ConfigMap', name: 'web', uid: 'uid-web', controller: true }] });
  });
});
