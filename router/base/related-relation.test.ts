import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import { parseRelated, relatedTarget, relatedView, RelatedSpecError, type RelationConfig } from './related-relation.ts';

function one(entry: Record<string, unknown>): RelationConfig {
  const [relation] = parseRelated([{ name: 'r', apiVersion: 'v1', kind: 'ConfigMap', ...entry }]);
  return relation!;
}

const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team', annotations: { 'kubeloop.dev/config-map': 'web-config' } },
  spec: { configs: ['a', 'b', 'a'], selector: { matchLabels: { app: 'web' } } },
};

describe('parseRelated', () => {
  it('names the bad field', () => {
    const problem = (entries: unknown) => {
      try {
        parseRelated(entries);
      } catch (error) {
        return error instanceof RelatedSpecError ? `${error.field}: ${error.problem}` : String(error);
      }
      return 'accepted';
    };
    expect(problem([{ name: 'Bad', apiVersion: 'v1', kind: 'ConfigMap' }])).toMatch(/^spec\.related\[0\]\.name/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap' }, { name: 'a', apiVersion: 'v1', kind: 'Secret' }])).toMatch(/spec\.related\[1\]\.name: "a" is used twice/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { annotation: 'x' }, selector: {} }])).toMatch(/at most one of nameFrom, selector, selectorFrom/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: {} }])).toMatch(/exactly one of annotation, label, fieldPath/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { fieldPath: 'spec.[x' } }])).toMatch(/nameFrom\.fieldPath/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', nameFrom: { label: 'x' }, namespace: '*' }])).toMatch(/needs one namespace/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'Not_A_Namespace' }])).toMatch(/namespace/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', fields: ['data'], metadataOnly: true }])).toMatch(/metadataOnly/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'ConfigMap', fields: ['spec.items[0]'] }])).toMatch(/not \[<index>\]/);
    expect(problem([{ name: 'a', apiVersion: 'v1', kind: 'Pod', selector: { matchExpressions: [{ key: 'k', operator: 'Bogus' }] } }])).toMatch(/selector/);
    expect(problem(Array.from({ length: 17 }, (_, i) => ({ name: `e${i}`, apiVersion: 'v1', kind: 'ConfigMap' })))).toMatch(/at most 16/);
  });
});

describe('relatedTarget', () => {
  it('reads one name from an annotation, in the primary namespace', () => {
    expect(relatedTarget(one({ nameFrom: { annotation: 'kubeloop.dev/config-map' } }), deployment, true)).toEqual({ kind: 'names', keys: ['team/web-config'] });
  });
  it('reads a list of names, each once, in a named namespace', () => {
    expect(relatedTarget(one({ nameFrom: { fieldPath: 'spec.configs' }, namespace: 'shared' }), deployment, true)).toEqual({ kind: 'names', keys: ['shared/a', 'shared/b'] });
  });
  it('refers to nothing when the field is missing', () => {
    expect(relatedTarget(one({ nameFrom: { annotation: 'absent' } }), deployment, true)).toBeUndefined();
  });
  it('names a cluster-scoped object without a namespace', () => {
    const claim: KubeObject = { apiVersion: 'x/v1', kind: 'Claim', metadata: { name: 'c', namespace: 'team' }, spec: { storageClassName: 'fast' } };
    expect(relatedTarget(one({ kind: 'StorageClass', apiVersion: 'storage.k8s.io/v1', nameFrom: { fieldPath: 'spec.storageClassName' } }), claim, false)).toEqual({ kind: 'names', keys: ['fast'] });
  });
  it('takes a selector from a plain label map (a Service) or a LabelSelector field', () => {
    const service: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'team' }, spec: { selector: { app: 'web' } } };
    expect(relatedTarget(one({ kind: 'Pod', selectorFrom: { fieldPath: 'spec.selector' } }), service, true)).toEqual({ kind: 'selector', namespace: 'team', selector: { matchLabels: { app: 'web' } } });
    expect(relatedTarget(one({ kind: 'Pod', selectorFrom: { fieldPath: 'spec.selector' } }), deployment, true)).toEqual({ kind: 'selector', namespace: 'team', selector: { matchLabels: { app: 'web' } } });
  });
  it('selects nothing (never everything) from an empty selector field', () => {
    const headless: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'team' }, spec: { selector: {} } };
    expect(relatedTarget(one({ kind: 'Pod', selectorFrom: { fieldPath: 'spec.selector' } }), headless, true)).toBeUndefined();
  });
  it('covers every object of the scope without a source: all namespaces with "*"', () => {
    expect(relatedTarget(one({ kind: 'Node', namespace: '*' }), deployment, true)).toEqual({ kind: 'selector', namespace: undefined, selector: {} });
    expect(relatedTarget(one({ selector: { matchLabels: { a: 'b' } } }), deployment, true)).toEqual({ kind: 'selector', namespace: 'team', selector: { matchLabels: { a: 'b' } } });
  });
});

describe('relatedView', () => {
  const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n', managedFields: [{}] }, data: { a: '1', big: 'x'.repeat(100) } };
  it('drops managedFields and keeps only listed fields', () => {
    expect(relatedView(one({}), configMap)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: configMap.data });
    expect(relatedView(one({ fields: ['data.a'] }), configMap)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { a: '1' } });
  });
});
