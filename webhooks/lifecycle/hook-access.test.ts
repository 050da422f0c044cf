import { describe, expect, it } from 'vitest';
import type { HookContextEntry } from '../../api/admission-hook.ts';
import { describeCheck } from '../../lib/kube/access-review.ts';
import type { ResourceInfo } from '../../lib/kube/index.ts';
import { contextAccessChecks } from './hook-access.ts';

const resources: Record<string, ResourceInfo> = {
  Secret: { group: '', version: 'v1', apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  Watcher: { group: 'watch.kubeloop.dev', version: 'v1alpha1', apiVersion: 'watch.kubeloop.dev/v1alpha1', kind: 'Watcher', plural: 'watchers', namespaced: true },
  Node: { group: '', version: 'v1', apiVersion: 'v1', kind: 'Node', plural: 'nodes', namespaced: false },
};
const entry = (name: string, kind: string, namespace?: string): HookContextEntry => ({ name, apiVersion: resources[kind]!.apiVersion, kind, objectName: { value: 'x' }, ...(namespace ? { namespace } : {}) });

describe('contextAccessChecks', () => {
  it('asks for get in a fixed namespace, cluster-wide for "Same" and for cluster-scoped kinds, once each', () => {
    const checks = contextAccessChecks([entry('token', 'Secret', 'kube-system'), entry('watcher', 'Watcher'), entry('w2', 'Watcher', 'Same'), entry('node', 'Node', 'ignored')], (e) => resources[e.kind]!);
    expect(checks.map(describeCheck)).toEqual(['get secrets in namespace kube-system', 'get watchers.watch.kubeloop.dev cluster-wide', 'get nodes cluster-wide']);
  });
});
