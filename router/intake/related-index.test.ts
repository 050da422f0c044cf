import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../lib/contract/types.ts';
import { RelatedIndex } from './related-index.ts';

const CM = 'ConfigMap.v1';
const POD = 'Pod.v1';
const configMap = (namespace: string, name: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace, name } });
const pod = (name: string, labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'a', name, labels } });

describe('RelatedIndex', () => {
  it('maps an object to exactly the primaries naming it', () => {
    const index = new RelatedIndex();
    index.set(CM, 'config', 'a/web', { kind: 'names', keys: ['a/shared'] });
    index.set(CM, 'config', 'a/api', { kind: 'names', keys: ['a/shared', 'a/api-config'] });
    index.set(CM, 'config', 'b/web', { kind: 'names', keys: ['b/shared'] });
    expect(index.affected(CM, configMap('a', 'shared'))).toEqual([{ primary: 'a/api', relation: 'config' }, { primary: 'a/web', relation: 'config' }]);
    expect(index.affected(CM, configMap('a', 'api-config'))).toEqual([{ primary: 'a/api', relation: 'config' }]);
    expect(index.affected(CM, configMap('a', 'other'))).toEqual([]);
    expect(index.affected(POD, configMap('a', 'shared'))).toEqual([]);
  });

  it('follows a primary that changes what it names, and forgets a deleted one', () => {
    const index = new RelatedIndex();
    index.set(CM, 'config', 'a/web', { kind: 'names', keys: ['a/old'] });
    index.set(CM, 'config', 'a/web', { kind: 'names', keys: ['a/new'] });
    expect(index.affected(CM, configMap('a', 'old'))).toEqual([]);
    expect(index.affected(CM, configMap('a', 'new'))).toHaveLength(1);
    index.set(CM, 'config', 'a/web', undefined);
    expect(index.affected(CM, configMap('a', 'new'))).toEqual([]);
    index.set(CM, 'config', 'a/web', { kind: 'names', keys: ['a/new'] });
    index.forget('a/web');
    expect(index.affected(CM, configMap('a', 'new'))).toEqual([]);
    expect(index.size(CM, 'config')).toBe(0);
  });

  it('matches selectors in the primary namespace and in all namespaces; an update concerns old and new labels', () => {
    const index = new RelatedIndex();
    index.set(POD, 'pods', 'a/web', { kind: 'selector', namespace: 'a', selector: { matchLabels: { app: 'web' } } });
    index.set(POD, 'pods', 'b/web', { kind: 'selector', namespace: 'b', selector: { matchLabels: { app: 'web' } } });
    index.set(POD, 'everything', 'a/audit', { kind: 'selector', namespace: undefined, selector: {} });
    expect(index.affected(POD, pod('p', { app: 'web' }))).toEqual([{ primary: 'a/web', relation: 'pods' }, { primary: 'a/audit', relation: 'everything' }]);
    expect(index.affected(POD, pod('p', { app: 'db' }))).toEqual([{ primary: 'a/audit', relation: 'everything' }]);
    // Relabelled away from the selector: the Service it left is told.
    expect(index.affected(POD, pod('p', { app: 'db' }), pod('p', { app: 'web' })).map((a) => a.primary)).toContain('a/web');
  });

  it('forgets only the relations it is asked to (requirements of one primary)', () => {
    const index = new RelatedIndex();
    index.set(CM, 'config', 'a/web', { kind: 'names', keys: ['a/c'] });
    index.set('Secret.v1', 'required:db', 'a/web', { kind: 'names', keys: ['a/db'] });
    index.forget('a/web', (_kind, relation) => relation.startsWith('required:'));
    expect(index.affected('Secret.v1', { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'a', name: 'db' } })).toEqual([]);
    expect(index.affected(CM, configMap('a', 'c'))).toHaveLength(1);
  });
});
