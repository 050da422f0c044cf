import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import type { ResourceInfo } from '../../lib/kube/resource-paths.ts';
import { inTargetNamespace } from './action-target.ts';

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
